/**
 * A DNS server on loopback (UDP, the real wire format) answering A queries from a table the test
 * changes as it goes, with a TTL of 0: each lookup asks again, as a rebinding attacker's server
 * would want. `resolve` looks names up through it, as the server's resolver would.
 */
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import type { ResolvedAddress } from '../src/kernel/public-address.js';

export async function fakeDns(names: Map<string, string>) {
  const socket = createSocket('udp4');
  socket.on('message', (query, from) => {
    let at = 12;
    const labels: string[] = [];
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('ascii'));
      at += query[at]! + 1;
    }
    const questionEnd = at + 5;
    const type = query.readUInt16BE(at + 1);
    const address = names.get(labels.join('.').toLowerCase());
    const answers = address && type === 1 ? [address] : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(address ? 0x8180 : 0x8183, 2); // a response; NXDOMAIN for a name it does not know
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records = answers.map((a) => {
      const r = Buffer.alloc(16);
      r.writeUInt16BE(0xc00c, 0); // the question's name
      r.writeUInt16BE(1, 2); // A
      r.writeUInt16BE(1, 4); // IN
      r.writeUInt32BE(0, 6); // TTL 0
      r.writeUInt16BE(4, 10);
      for (const [i, octet] of a.split('.').entries()) r.writeUInt8(Number(octet), 12 + i);
      return r;
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...records]), from.port, from.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${(socket.address() as AddressInfo).port}`]);
  return {
    resolve: async (host: string): Promise<ResolvedAddress[]> =>
      (await resolver.resolve4(host)).map((address) => ({ address, family: 4 })),
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}
