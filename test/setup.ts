/**
 * No test reaches the network: a socket to anything but loopback fails at once.
 */
import net from 'node:net';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/;
const original = net.Socket.prototype.connect;

net.Socket.prototype.connect = function patched(this: net.Socket, ...args: unknown[]) {
  const first = args[0] as { host?: string; path?: string } | number | string;
  let host: string | undefined;
  if (typeof first === 'object' && first !== null) host = first.path ? 'localhost' : (first.host ?? 'localhost');
  else if (typeof first === 'number') host = typeof args[1] === 'string' ? args[1] : 'localhost';
  else if (typeof first === 'string') host = 'localhost'; // a unix socket path
  if (host !== undefined && !LOOPBACK.test(host))
    throw new Error(`test tried to reach the network (${host}); only loopback is allowed`);
  return (original as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;
