import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { parseUpstreamUrl } from '../llm-client/upstream-url.ts';

// RFC 9110 §7.6.1's hop-by-hop fields, and what the gateway sets itself on each hop.
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
  // The client's key is for the gateway; the upstream gets the gateway's own (upstream.apiKey).
  'authorization',
]);

/**
 * The client's headers as they go upstream (or an upstream's as they go back): the hop-by-hop
 * ones, those the `Connection` header names as this hop's own (RFC 9110 §7.6.1), and the client's
 * key left out.
 */
export function forwardedHeaders(incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = [incoming['connection'] ?? []].flat().flatMap((value) => value.split(',').map((field) => field.trim().toLowerCase()));
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !NOT_FORWARDED.has(name) && !named.includes(name)) headers[name] = value;
  }
  return headers;
}

/**
 * The upstream's answer headers less its CORS ones: which pages may read an answer is the
 * gateway's policy (cors.ts, set on `res` before this), and vLLM allows every origin by default,
 * which would otherwise override it on every forwarded endpoint. Its `Vary` joins the gateway's
 * (`Origin`) instead of replacing it, as writeHead would: a cache must key on both. A `Location`
 * under `baseUrl` (the upstream that answered) names the gateway's path instead (locationBelowGateway).
 */
export function answerHeaders(upstream: Record<string, string | string[]>, res: ServerResponse, baseUrl?: string): Record<string, string | string[]> {
  const headers = forwardedHeaders(upstream);
  for (const name of Object.keys(headers)) if (name.startsWith('access-control-')) delete headers[name];
  const location = headers['location'];
  if (typeof location === 'string' && baseUrl !== undefined) headers['location'] = locationBelowGateway(location, baseUrl);
  const ours = res.getHeader('vary');
  if (ours !== undefined && headers['vary'] !== undefined) headers['vary'] = joinedVary(String(ours), [headers['vary']].flat());
  return headers;
}

/** One `Vary` from the gateway's and the upstream's, each field once (`*` alone means all). */
function joinedVary(ours: string, theirs: string[]): string {
  const fields = new Map<string, string>();
  for (const field of [ours, ...theirs].flatMap((value) => value.split(','))) {
    const name = field.trim();
    if (name !== '' && !fields.has(name.toLowerCase())) fields.set(name.toLowerCase(), name);
  }
  return fields.has('*') ? '*' : [...fields.values()].join(', ');
}

/**
 * An upstream's redirect as the client should follow it, as nginx's `proxy_redirect default` does:
 * vLLM's FastAPI answers `/v1/completions/` with a 307 to its own absolute URL
 * (`http://10.0.0.5:8000/v1/completions`, Starlette's redirect_slashes), which would send the
 * client past the gateway to the model server's internal address, without the gateway's key.
 * A target under the base URL becomes the same path below the gateway's `/v1` (an absolute-path
 * reference, resolved against the address the client used); any other is left as it is. The base
 * URL's own query (Azure's `?api-version=…`) is left out of it: the gateway adds it to every
 * forwarded request, so a Location that kept it would carry it twice once followed.
 */
export function locationBelowGateway(location: string, baseUrl: string): string {
  // A relative path (`completions`, `../x`) resolves against the client's URL as against the
  // upstream's, the two paths being the same below /v1: it is right as it is.
  if (!location.startsWith('/') && !/^[a-z][a-z\d+.-]*:/i.test(location)) return location;
  let base: ReturnType<typeof parseUpstreamUrl>;
  let url: URL;
  try {
    base = parseUpstreamUrl(baseUrl);
    url = new URL(location, `${base.origin}${base.pathname}/`);
  } catch {
    return location;
  }
  if (url.origin !== base.origin) return location;
  const below = url.pathname === base.pathname ? '' : url.pathname.startsWith(`${base.pathname}/`) ? url.pathname.slice(base.pathname.length) : undefined;
  return below === undefined ? location : `/v1${below}${withoutBaseQuery(url.search, base.search)}${url.hash}`;
}

/** `search` less one occurrence of each of the base query's fields, compared as sent (no re-encoding). */
function withoutBaseQuery(search: string, baseSearch: string): string {
  if (baseSearch.length <= 1 || search.length <= 1) return search;
  const fields = search.slice(1).split('&');
  for (const field of baseSearch.slice(1).split('&')) {
    const at = fields.indexOf(field);
    if (at >= 0) fields.splice(at, 1);
  }
  return fields.length === 0 ? '' : `?${fields.join('&')}`;
}
