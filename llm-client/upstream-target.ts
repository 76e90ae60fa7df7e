import type { Dispatcher } from 'undici';
import { upstreamPool } from './upstream-pools.ts';
import { parseUpstreamUrl, type UpstreamUrl } from './upstream-url.ts';

export interface UpstreamTarget {
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/**
 * Base URLs already parsed: a gateway talks to a handful of upstreams, and `new URL` cost more on
 * each request's way to the upstream than the rest of this function (~50 µs on an idle core).
 * Bounded in case a library caller passes a new URL per request.
 */
const parsedUrls = new Map<string, UpstreamUrl>();
const MAX_PARSED_URLS = 64;

function parseBaseUrl(baseUrl: string): UpstreamUrl {
  let parsed = parsedUrls.get(baseUrl);
  if (parsed === undefined) {
    parsed = parseUpstreamUrl(baseUrl);
    if (parsedUrls.size >= MAX_PARSED_URLS) parsedUrls.clear();
    parsedUrls.set(baseUrl, parsed);
  }
  return parsed;
}

/**
 * Where one endpoint of an upstream lives and how to reach it (shared pool unless overridden).
 * `endpoint` is the path after the base URL (`/chat/completions`); `query`, without its `?`, joins
 * the base URL's own.
 */
export function upstreamTarget(
  options: { baseUrl: string; apiKey?: string | undefined; dispatcher?: Dispatcher | undefined; timeouts: { connectMs: number } },
  endpoint: string,
  query = '',
): UpstreamTarget {
  const url = parseBaseUrl(options.baseUrl);
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  return {
    dispatcher: options.dispatcher ?? upstreamPool(url, options.timeouts.connectMs),
    origin: url.origin,
    // Keeps a query string such as Azure's ?api-version=… on the endpoint.
    path: `${url.pathname}${endpoint}${joinQuery(url.search, query)}`,
    headers,
  };
}

function joinQuery(baseSearch: string, query: string): string {
  if (query === '') return baseSearch;
  return baseSearch === '' ? `?${query}` : `${baseSearch}&${query}`;
}
