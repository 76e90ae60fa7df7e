import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { HostNotAllowedError } from '../core/errors.ts';

/**
 * DNS rebinding protection for a keyless gateway on loopback. A web page on a name its attacker
 * points at 127.0.0.1 is same-origin to the browser, so it could post JSON to the gateway and read
 * the answer, running the gateway's tools from any site the user visits. Such a request carries
 * the attacker's name in `Host`; real local clients use a loopback name or address. With API keys
 * (the page has none) or a non-loopback listener (a network service, reached by any name), no check.
 *
 * Returns the check to run per request, or undefined when none applies.
 */
export function hostCheck(listenHost: string, apiKeys: readonly string[], allowedHosts: readonly string[]): ((req: IncomingMessage) => void) | undefined {
  if (apiKeys.length > 0 || !isLoopbackName(listenHost)) return undefined;
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  return (req) => {
    const header = req.headers.host;
    if (header === undefined) return;
    const name = hostName(header);
    if (!isLoopbackName(name) && !allowed.has(name)) throw new HostNotAllowedError(name, listenHost);
  };
}

/** `Host` without its port; an IPv6 literal without its brackets. */
function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(1, value.indexOf(']'));
  const colon = value.lastIndexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

function isLoopbackName(name: string): boolean {
  const host = name.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
