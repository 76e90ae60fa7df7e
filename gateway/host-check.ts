import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { HostNotAllowedError } from '../core/errors.ts';

/**
 * DNS rebinding protection for a keyless gateway on loopback. A web page on a name its attacker
 * points at 127.0.0.1 is same-origin to the browser, so it could post JSON to the gateway and read
 * the answer, running the gateway's tools from any site the user visits. Such a request carries
 * the attacker's name in `Host`; real local clients use a loopback name, an IP address, or the name
 * the gateway was told to listen on. With API keys (the page has none) or a non-loopback listener
 * (a network service, reached by any name), no check.
 *
 * Whether the listener is loopback is read from the address it bound (`boundAddress`), not from
 * how `--host` spelt it: the machine's own name (Debian maps it to 127.0.1.1), `127.1` or
 * `0:0:0:0:0:0:0:1` all bind loopback, and the check must hold for them too.
 *
 * Returns the check to run per request, or undefined when none applies.
 */
export function hostCheck(
  listenHost: string,
  boundAddress: string,
  apiKeys: readonly string[],
  allowedHosts: readonly string[],
): ((req: IncomingMessage) => void) | undefined {
  if (apiKeys.length > 0 || !isLoopbackAddress(boundAddress)) return undefined;
  const allowed = new Set([...allowedHosts, listenHost].map((h) => bare(h.toLowerCase()).replace(/\.$/, '')));
  return (req) => {
    const header = req.headers.host;
    if (header === undefined) return;
    const name = hostName(header);
    if (!cannotBeRebound(name) && !allowed.has(name)) throw new HostNotAllowedError(name, listenHost);
  };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** An address a server bound (server.address().address) that only this machine can reach. */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `Host` without its port; an IPv6 literal without its brackets. */
function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']'));
  const colon = value.lastIndexOf(':');
  // `localhost.` is `localhost` written as a fully qualified name.
  return (colon === -1 ? value : value.slice(0, colon)).replace(/\.$/, '');
}

function bare(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/**
 * A name that cannot be an attacker's: a loopback name, or any IP address at all (`0.0.0.0`, which
 * reaches loopback on Linux and is what vLLM's start-up line prints; a LAN address), since only a
 * DNS name can be rebound.
 */
function cannotBeRebound(name: string): boolean {
  const host = bare(name.toLowerCase());
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0;
}
