/**
 * Which addresses a server-side fetch of a URL someone else named may reach: public ones only.
 * Never this machine, private networks, link-local (cloud metadata at 169.254.169.254), shared
 * carrier space, multicast or reserved ranges, and the IPv6 forms of the same. Used by the OAuth
 * client metadata fetch and by webhook deliveries. 6to4 (2002::/16) and NAT64 prefixes are refused
 * whole: they can carry any IPv4 address, private ones included.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Two lists, one per family: a BlockList checks an IPv4 address against IPv4-mapped IPv6 rules
// too, so '::ffff:0:0/96' in a shared list would refuse every IPv4 address.
const NOT_PUBLIC_V4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC_V4.addSubnet(net, bits, 'ipv4');
const NOT_PUBLIC_V6 = new BlockList();
for (const [net, bits] of [
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC_V6.addSubnet(net, bits, 'ipv6');
const LOOPBACK_V4 = new BlockList();
LOOPBACK_V4.addSubnet('127.0.0.0', 8, 'ipv4');

export type ResolvedAddress = { address: string; family: number };

/** Every address a name has (the system's resolver by default; tests give a DNS server of their own). */
export type Resolve = (host: string) => Promise<ResolvedAddress[]>;
/** The system's resolver, given at most 5 seconds: a name server that never answers must not hold a request. */
const LOOKUP_MS = 5_000;
const systemResolve: Resolve = (host) =>
  Promise.race([
    lookup(host, { all: true }),
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`its host did not resolve within ${LOOKUP_MS / 1000} seconds`)),
        LOOKUP_MS,
      ).unref(),
    ),
  ]);

/** Where a fetch may connect: `public` only, or also this machine (`loopback`, tests), or anywhere (`any`, development). */
export type AddressPolicy = 'public' | 'loopback' | 'any';

function addressAllowed(a: ResolvedAddress, policy: AddressPolicy): boolean {
  if (policy === 'any') return true;
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const v4 = a.family === 4 ? a.address : /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a.address)?.[1];
  if (v4) return !NOT_PUBLIC_V4.check(v4, 'ipv4') || (policy === 'loopback' && LOOPBACK_V4.check(v4, 'ipv4'));
  return !NOT_PUBLIC_V6.check(a.address, 'ipv6') || (policy === 'loopback' && a.address === '::1');
}

/**
 * The address to connect to for `host` (a name or a literal, brackets allowed): every address
 * the name has must be allowed, else an Error saying so. Connect to the one returned (pinned), so
 * that a second lookup cannot point the connection elsewhere.
 */
export async function allowedAddress(
  host: string,
  policy: AddressPolicy,
  resolve: Resolve = systemResolve,
): Promise<ResolvedAddress> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await resolve(bare);
  if (addresses.length === 0) throw new Error('its host has no address');
  // Which address is not said: a stranger could otherwise map names inside the operator's network.
  for (const a of addresses)
    if (!addressAllowed(a, policy)) throw new Error('its host resolves to an address that is not a public address');
  return addresses[0]!;
}
