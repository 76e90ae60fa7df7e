import { Client, type buildConnector, type Dispatcher } from 'undici';
import type { HttpGetOptions } from './http-get-options.ts';
import { readLimitedBody } from './read-limited-body.ts';

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
  /** The body was cut: at maxBytes, or at the time limit (`timedOut`). */
  truncated: boolean;
  /** The time limit ran out while the body was still arriving; `body` is what came before. */
  timedOut: boolean;
  /** A Content-Encoding the body still has (the server ignored `identity`, with one not decoded here). */
  contentEncoding?: string;
}

/**
 * Whether `err` is the fetch running out of time: the whole-fetch signal's timeout (an
 * AbortSignal.timeout's TimeoutError) or undici's own per-phase timeouts.
 */
export function isTimeoutError(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted && (signal.reason as { name?: string } | undefined)?.name === 'TimeoutError') return true;
  const code = (err as { code?: string } | undefined)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A Location header as browsers read it: Node hands header bytes over as Latin-1, but servers send
 * a non-ASCII path as raw UTF-8 (/café), which read as Latin-1 became /caf%C3%83%C2%A9. Bytes that
 * are not UTF-8 stay Latin-1.
 */
function locationText(header: string): string {
  if (!/[^\x00-\x7f]/.test(header)) return header;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(header, 'latin1'));
  } catch {
    return header;
  }
}

/** Parses a URL the tool may fetch; a string is the reason it may not. */
export function parseHttpUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not a valid absolute URL: ${JSON.stringify(text)}${schemeHint(text)}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    // `www.example.org:8080/x` parses with the scheme `www.example.org:`: naming that as the scheme misled.
    const schemeless = url.protocol.includes('.') || /^[^:]*:\d/.test(text);
    if (schemeless && schemeHint(text) !== '') return `not a valid absolute URL: ${JSON.stringify(text)}${schemeHint(text)}`;
    return `only http:// and https:// URLs can be fetched, not ${url.protocol}`;
  }
  if (url.username || url.password) return 'URLs with credentials are not fetched';
  if (BAD_PORTS.has(Number(url.port))) return `port ${url.port} is not fetched: it is another protocol's (mail, SSH, IRC…), which browsers refuse too`;
  return url;
}

/**
 * For a URL written without its scheme, as models often write one (`example.org/page`,
 * `localhost:3000/api`), the URL to write instead; '' when `https://` in front makes no host
 * name of it either.
 */
function schemeHint(text: string): string {
  const written = `https://${text.replace(/^\/\//, '')}`; // `//host/path` is a scheme-relative URL
  if (/^[a-z][a-z\d+.-]*:\/\//i.test(text) || !URL.canParse(written)) return '';
  const { hostname } = new URL(written);
  return hostname.includes('.') || hostname === 'localhost' ? ` has no scheme; write ${JSON.stringify(written)}` : '';
}

/**
 * The ports the Fetch standard blocks (https://fetch.spec.whatwg.org/#port-blocking): a GET a
 * model writes to `host:25` or `host:6667` speaks HTTP to a mail or an IRC server, a classic
 * request-forgery path that private-address checks do not close on a public host.
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117,
  119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636,
  989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * GET with undici, one Client per origin visited (a string URL is checked by parseHttpUrl first):
 * follows up to `maxRedirects` redirects (each target re-checked by parseHttpUrl, and an error
 * on a later hop says the redirect led there), reads at most `maxBytes` of the body, asks for no
 * compression (so the byte limit is the real size) and decodes the body if a server compresses
 * it anyway (readLimitedBody).
 */
export async function limitedGet(start: string | URL, options: LimitedGetOptions): Promise<LimitedGetResult> {
  const first = typeof start === 'string' ? parseHttpUrl(start) : start;
  if (typeof first === 'string') throw new Error(first);
  let url = first;
  for (let hop = 0; ; hop++) {
    const client = new Client(url.origin, { connect: options.connectorFor(url.origin), headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
    try {
      let response: Dispatcher.ResponseData;
      try {
        response = await client.request({
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { 'user-agent': options.userAgent, accept: '*/*', 'accept-encoding': 'identity' },
          signal: options.signal,
        });
      } catch (err) {
        // Without this the model reads "localhost is a private network address" under the URL it asked for.
        if (hop > 0 && !isTimeoutError(err, options.signal)) {
          const outcome = (err as { code?: string }).code === 'EPRIVATENETWORK' ? 'refused' : 'which failed';
          throw new Error(`redirected to ${url.href}, ${outcome}: ${(err as Error).message}`, { cause: err });
        }
        throw err;
      }
      const location = response.headers['location'];
      if (REDIRECTS.has(response.statusCode) && typeof location === 'string') {
        await response.body.dump();
        if (hop >= options.maxRedirects) throw new Error(`more than ${options.maxRedirects} redirects`);
        const target = locationText(location);
        if (!URL.canParse(target, url)) throw new Error(`redirected to ${JSON.stringify(target)}, which is not a URL`);
        const next = parseHttpUrl(new URL(target, url).href);
        if (typeof next === 'string') throw new Error(`redirected to a URL that is not fetched: ${next}`);
        url = next;
        continue;
      }
      const header = (name: string) => {
        const value = response.headers[name];
        return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';
      };
      const body = await readLimitedBody(response.body, {
        maxBytes: options.maxBytes,
        contentEncoding: header('content-encoding'),
        isTimeout: (err) => isTimeoutError(err, options.signal),
      });
      return { url: url.href, status: response.statusCode, contentType: header('content-type'), ...body };
    } finally {
      await client.destroy().catch(() => {});
    }
  }
}
