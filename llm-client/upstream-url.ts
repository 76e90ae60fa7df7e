import { z } from 'zod';

/**
 * Where an upstream's HTTP requests go: an origin (scheme, host, port) or, for a model server on
 * the same machine, a Unix domain socket (vLLM's `--uds`), and the base path they share.
 */
export interface UpstreamUrl {
  /** http(s)://host:port; `http://localhost` for a socket (the Host header it sends). */
  origin: string;
  /** The Unix domain socket to connect to instead of the origin's host and port. */
  socketPath?: string;
  /** The base path without its trailing slashes, e.g. `/v1`. */
  pathname: string;
  /** A query string to keep on every endpoint (Azure's `?api-version=…`), with its `?`, or ''. */
  search: string;
}

const UNIX = 'unix:';

/**
 * Parses an upstream base URL: `http(s)://host:port/v1`, or nginx's form for a socket,
 * `unix:/run/vllm.sock:/v1` (the socket's path, a colon, the base path; the path cannot hold a
 * colon). Throws a TypeError that says what is wrong.
 */
export function parseUpstreamUrl(baseUrl: string): UpstreamUrl {
  if (baseUrl.startsWith(UNIX)) {
    const rest = baseUrl.slice(UNIX.length);
    const colon = rest.indexOf(':');
    const socketPath = colon < 0 ? rest : rest.slice(0, colon);
    const path = colon < 0 ? '' : rest.slice(colon + 1);
    if (socketPath === '' || socketPath.includes('?')) throw new TypeError(`"${baseUrl}" names no socket: write unix:/path/to.sock:/v1`);
    if (path !== '' && !path.startsWith('/')) throw new TypeError(`"${baseUrl}": the base path after the socket's colon must start with /, as in unix:/path/to.sock:/v1`);
    const query = path.indexOf('?');
    return {
      origin: 'http://localhost',
      socketPath,
      pathname: (query < 0 ? path : path.slice(0, query)).replace(/\/+$/, ''),
      search: query < 0 ? '' : path.slice(query),
    };
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`"${baseUrl}" is not a URL: write http://host:port/v1, or unix:/path/to.sock:/v1 for a socket`);
  }
  // `localhost:8000` is a valid URL whose scheme is `localhost:`: a host and port without http://.
  const hostAndPort = /^[a-z0-9.-]+:\d+(\/.*)?$/i.exec(baseUrl);
  if (hostAndPort && url.protocol !== 'http:' && url.protocol !== 'https:') {
    const path = hostAndPort[1] ? '' : '/v1 (vLLM, SGLang and llama.cpp answer under /v1)';
    throw new TypeError(`"${baseUrl}" has no scheme: write http://${baseUrl}${path}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`"${baseUrl}": an upstream is reached over http:, https: or unix:, not ${url.protocol}`);
  // Never sent (a request goes to the origin, which has none), and the URL is shown in /health,
  // /metrics, the banner and every access line: refused rather than silently dropped or leaked.
  if (url.username !== '' || url.password !== '') {
    throw new TypeError(`"${url.protocol}//…@${url.host}${url.pathname}": credentials in an upstream URL are not sent; give the upstream's key with --upstream-api-key (config upstream.apiKey)`);
  }
  return { origin: url.origin, pathname: url.pathname.replace(/\/+$/, ''), search: url.search };
}

/** What is wrong with `url` as an upstream base URL, or undefined when nothing is. */
function urlProblem(url: string): string | undefined {
  try {
    parseUpstreamUrl(url);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const withoutTrailingSlashes = (url: string) => url.replace(/\/+$/, '');

/** An upstream base URL as configured (parseUpstreamUrl's forms), trailing slashes dropped. */
export const UpstreamUrlSchema = z
  .string()
  .superRefine((url, ctx) => {
    const message = urlProblem(url);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  })
  .transform(withoutTrailingSlashes);

/**
 * One base URL, or several (replicas of one model), as UpstreamUrlSchema; unlike a union of the
 * two, a bad URL's own message reaches the user, with its index in a list.
 */
export const UpstreamUrlsSchema = z
  .union([z.string(), z.array(z.string()).min(1)])
  .superRefine((value, ctx) => {
    for (const [index, url] of (typeof value === 'string' ? [value] : value).entries()) {
      const message = urlProblem(url);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message, path: typeof value === 'string' ? [] : [index] });
    }
  })
  .transform((value) => (typeof value === 'string' ? withoutTrailingSlashes(value) : value.map(withoutTrailingSlashes)));
