/**
 * No test reaches the network: a socket to anything but loopback fails at once. On PostgreSQL,
 * the file runs on its worker's own database (test/global-setup.ts).
 */
import net from 'node:net';
import { workerDatabase } from './workers.js';

if (process.env.DATABASE_URL) {
  process.env.TEST_DATABASE_URL ??= process.env.DATABASE_URL;
  process.env.DATABASE_URL = workerDatabase(process.env.TEST_DATABASE_URL, Number(process.env.VITEST_POOL_ID ?? 1));
}

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
