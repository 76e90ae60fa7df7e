import type { IncomingMessage, ServerResponse } from 'node:http';
import { OriginNotAllowedError } from '../core/errors.ts';
import { OPENAI_REQUEST_ID_HEADER, REQUEST_ID_HEADER } from './request-id.ts';

/**
 * What a page may read of an answer beyond the safelisted few: the request ids, and what OpenAI's
 * SDKs decide a retry by (x-should-retry: false after the gateway's tools ran, which a retry would
 * run again; the Retry-After of a 503 gateway_busy or an upstream's 429).
 */
const EXPOSED_HEADERS = `${REQUEST_ID_HEADER}, ${OPENAI_REQUEST_ID_HEADER}, x-should-retry, retry-after`;

/**
 * The methods a preflight allows: the gateway's own routes take GET and POST (HEAD needs no
 * preflight); a forwarded endpoint takes whatever its upstream does (SGLang's DELETE /v1/files/{id}),
 * so its preflight allows what vLLM's own CORS middleware allows, less OPTIONS and HEAD.
 */
const ROUTE_METHODS = 'GET, POST';
const FORWARDED_METHODS = 'DELETE, GET, PATCH, POST, PUT';

/** How long a browser may reuse a preflight's answer (seconds); Chrome caps it at 7200. */
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * Cross-origin access for web pages that call the gateway from the browser (a chat UI on another
 * port, a trace viewer). Off by default, unlike vLLM, which allows every origin: this gateway runs
 * tools, so only the origins named in `allowedOrigins` get CORS headers; `*` allows any (only with
 * API keys, checked in the config). Requests without an `Origin` (every non-browser client) are
 * untouched.
 */
export class CorsPolicy {
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(allowedOrigins: readonly string[]) {
    this.anyOrigin = allowedOrigins.includes('*');
    this.origins = new Set(allowedOrigins);
  }

  allows(origin: string): boolean {
    return this.anyOrigin || this.origins.has(origin);
  }

  /**
   * For what a browser sends from any page without asking the server first (a WebSocket, a
   * text/plain or multipart POST forwarded upstream with the gateway's own upstream key): throws
   * OriginNotAllowedError unless the request has no Origin (no browser), or one that is allowed or
   * this gateway's own (the playground).
   */
  refuseForeignOrigin(req: IncomingMessage): void {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allows(origin) && !isSameOrigin(origin, req.headers.host)) throw new OriginNotAllowedError(origin);
  }

  /**
   * Adds the CORS headers an allowed origin's response needs (errors included, so the page can
   * read them). Returns true when `req` was a preflight and has been answered; a preflight from
   * any other origin throws OriginNotAllowedError. `forwarded`: the path goes to the upstream.
   */
  handle(req: IncomingMessage, res: ServerResponse, forwarded = false): boolean {
    // Every answer varies by Origin once some origin is allowed (one gets the CORS headers, the
    // next not): said on all of them, or a shared cache could hand one origin's answer to another.
    if (this.anyOrigin || this.origins.size > 0) res.setHeader('vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!this.allows(origin)) {
      if (preflight) throw new OriginNotAllowedError(origin);
      // A simple request (a GET) is served, but the browser keeps its answer from the page.
      return false;
    }
    res.setHeader('access-control-allow-origin', origin);
    if (!preflight) {
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
      return false;
    }
    const headers: Record<string, string> = {
      'access-control-allow-methods': forwarded ? FORWARDED_METHODS : ROUTE_METHODS,
      'access-control-max-age': PREFLIGHT_MAX_AGE_S,
      'content-length': '0',
    };
    // Whatever headers the page's client sends (the openai SDK adds x-stainless-*): the key is
    // what guards the gateway, not the header names.
    const asked = req.headers['access-control-request-headers'];
    if (asked !== undefined) headers['access-control-allow-headers'] = asked;
    // Chrome's Private Network Access: a public page reaching a loopback or private address.
    if (req.headers['access-control-request-private-network'] === 'true') headers['access-control-allow-private-network'] = 'true';
    res.writeHead(204, headers).end();
    return true;
  }
}

/**
 * A page served by this gateway itself (the playground): its Origin names the host the request
 * was sent to. Safe to allow: a rebound name fails the Host check before this, and with API
 * keys the page needs the key.
 */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    // https too: behind a TLS-terminating proxy that passes the Host on.
    const scheme = url.protocol === 'https:' ? 'https' : 'http';
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === new URL(`${scheme}://${host}`).host;
  } catch {
    return false;
  }
}

/** `https://app.example:3000/` → `https://app.example:3000`; undefined for anything but an http(s) origin or `*`. */
export function normaliseOrigin(value: string): string | undefined {
  if (value === '*') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return undefined;
  return url.origin;
}
