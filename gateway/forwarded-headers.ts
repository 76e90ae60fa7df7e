import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

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
 * (`Origin`) instead of replacing it, as writeHead would: a cache must key on both.
 */
export function answerHeaders(upstream: Record<string, string | string[]>, res: ServerResponse): Record<string, string | string[]> {
  const headers = forwardedHeaders(upstream);
  for (const name of Object.keys(headers)) if (name.startsWith('access-control-')) delete headers[name];
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
