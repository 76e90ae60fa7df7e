import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';

/**
 * Loopback, private, link-local, CGNAT, multicast and reserved ranges: a model-chosen URL must
 * not reach the gateway's own host or its internal network (SSRF). IPv4-mapped IPv6 addresses
 * are checked against the IPv4 rules by BlockList itself; IPv6 forms that carry an IPv4 address
 * a router turns back into it (NAT64's 64:ff9b::/96, 6to4's 2002::/16) are checked against the
 * same IPv4 ranges, and the IPv4-compatible ::/96 and local NAT64 64:ff9b:1::/48 are refused whole
 * (PRIVATE_V6).
 */
const PRIVATE = new BlockList();
const PRIVATE_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  // Documentation ranges and the old 6to4 relay anycast: nothing public lives there either.
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 3],
] as const;
for (const [net, prefix] of PRIVATE_V4) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
  const [high, low] = ipv4Groups(net);
  PRIVATE.addSubnet(`64:ff9b::${high}:${low}`, 96 + prefix, 'ipv6');
  PRIVATE.addSubnet(`2002:${high}:${low}::`, 16 + prefix, 'ipv6');
}
// Also refused whole: SIIT's IPv4-translated ::ffff:0:0/96, the discard prefix 100::/64, Teredo
// 2001::/32 (an IPv4 address inside, obfuscated), documentation 2001:db8::/32 and 3fff::/20 (RFC 9637), and the old site-local fec0::/10.
const PRIVATE_V6 = [['::', 96], ['::ffff:0:0:0', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['3fff::', 20], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const;
for (const [net, prefix] of PRIVATE_V6) PRIVATE.addSubnet(net, prefix, 'ipv6');

/** An IPv4 address as the two 16-bit hex groups it fills in an IPv6 address. */
function ipv4Groups(address: string): [string, string] {
  const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && PRIVATE.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

export class PrivateNetworkError extends Error {
  readonly code = 'EPRIVATENETWORK';
  constructor(host: string, address: string) {
    const resolved = host === address ? '' : ` (${address})`;
    super(`${host} is a private network address${resolved}; http_get only fetches public hosts`);
  }
}

/** dns.lookup that refuses names resolving to a private address (checked after resolution, so DNS tricks do not help). */
const publicOnlyLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err);
    const blocked = addresses.find((a) => isPrivateAddress(a.address));
    if (blocked) return callback(new PrivateNetworkError(hostname, blocked.address));
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}) as unknown as LookupFunction;

/**
 * An undici connector (TCP, or TLS for https) with a connect timeout that, unless
 * `allowPrivateNetwork`, will not connect to private addresses, by IP literal or by name.
 */
export function guardedConnector(options: { allowPrivateNetwork: boolean; connectTimeoutMs: number }): buildConnector.connector {
  const connect = buildConnector({ timeout: options.connectTimeoutMs, ...(options.allowPrivateNetwork ? {} : { lookup: publicOnlyLookup }) });
  if (options.allowPrivateNetwork) return connect;
  return (target, callback) => {
    // An IP literal never reaches lookup(), so it is checked here.
    if (isPrivateAddress(target.hostname)) return callback(new PrivateNetworkError(target.hostname, target.hostname), null);
    connect(target, callback);
  };
}
