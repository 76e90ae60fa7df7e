import { Client, type buildConnector } from 'undici';
import type { HttpGetOptions } from './http-get-options.ts';

export interface LimitedGetOptions extends Required<Omit<HttpGetOptions, 'allowPrivateNetwork'>> {
  /** The connector for each origin visited (the pre-opened one for the first). */
  connectorFor: (origin: string) => buildConnector.connector;
  /** Bounds the whole fetch, redirects included (timeoutMs bounds each phase). */
  signal: AbortSignal;
}

export interface LimitedGetResult {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Parses a URL the tool may fetch; a string is the reason it may not. */
export function parseHttpUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not a valid absolute URL: ${JSON.stringify(text)}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `only http:// and https:// URLs can be fetched, not ${url.protocol}`;
  if (url.username || url.password) return 'URLs with credentials are not fetched';
  return url;
}

/**
 * GET with undici, one Client per origin visited (a string URL is checked by parseHttpUrl first): follows up to `maxRedirects` redirects (each
 * target re-checked by parseHttpUrl), reads at most `maxBytes` of the body, asks for no
 * compression (so the byte limit is the real size).
 */
export async function limitedGet(start: string | URL, options: LimitedGetOptions): Promise<LimitedGetResult> {
  const first = typeof start === 'string' ? parseHttpUrl(start) : start;
  if (typeof first === 'string') throw new Error(first);
  let url = first;
  for (let hop = 0; ; hop++) {
    const client = new Client(url.origin, { connect: options.connectorFor(url.origin), headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
    try {
      const response = await client.request({
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { 'user-agent': options.userAgent, accept: '*/*', 'accept-encoding': 'identity' },
        signal: options.signal,
      });
      const location = response.headers['location'];
      if (REDIRECTS.has(response.statusCode) && typeof location === 'string') {
        await response.body.dump();
        if (hop >= options.maxRedirects) throw new Error(`more than ${options.maxRedirects} redirects`);
        const next = parseHttpUrl(new URL(location, url).href);
        if (typeof next === 'string') throw new Error(`redirected to a URL that is not fetched: ${next}`);
        url = next;
        continue;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        const room = options.maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          response.body.destroy();
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      const contentType = response.headers['content-type'];
      return { url: url.href, status: response.statusCode, contentType: typeof contentType === 'string' ? contentType : '', body: Buffer.concat(chunks), truncated };
    } finally {
      await client.destroy().catch(() => {});
    }
  }
}
