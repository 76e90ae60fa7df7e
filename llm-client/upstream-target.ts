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
 * `endpoint` is the path after the base URL (`/chat/completions`), or with `besideV1` after the
 * server root the base URL's `/v1` sits in (vLLM's and llama.cpp's `/tokenize`); `query`, without
 * its `?`, joins the base URL's own.
 */
export function upstreamTarget(
  options: { baseUrl: string; apiKey?: string | undefined; dispatcher?: Dispatcher | undefined; timeouts: { connectMs: number } },
  endpoint: string,
  query = '',
  besideV1 = false,
): UpstreamTarget {
  const url = parseBaseUrl(options.baseUrl);
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  const base = besideV1 ? rootOf(url.pathname) : url.pathname;
  if (base === undefined) throw new TypeError(`${endpoint} is beside /v1, and the base URL ${options.baseUrl} does not end in /v1`);
  return {
    dispatcher: options.dispatcher ?? upstreamPool(url, options.timeouts.connectMs),
    origin: url.origin,
    // Keeps a query string such as Azure's ?api-version=… on the endpoint.
    path: `${base}${endpoint}${joinQuery(url.search, query)}`,
    headers,
  };
}

/**
 * The path of the server root an upstream's `/v1` sits in (`/openai` for `http://h/openai/v1`,
 * '' for `http://h:8000/v1`); undefined for a base URL that does not end in `/v1`, whose root
 * endpoints cannot be told apart from its own.
 */
export function serverRootPath(baseUrl: string): string | undefined {
  return rootOf(parseBaseUrl(baseUrl).pathname);
}

function rootOf(pathname: string): string | undefined {
  return pathname.endsWith('/v1') ? pathname.slice(0, -'/v1'.length) : undefined;
}

function joinQuery(baseSearch: string, query: string): string {
  if (query === '') return baseSearch;
  return baseSearch === '' ? `?${query}` : `${baseSearch}&${query}`;
}
