import { request, type Dispatcher } from 'undici';
import { z } from 'zod';
import type { SearchAnswer, SearchBackend, SearchHit } from './search-backend.ts';
import { textHead } from './text-head.ts';

export interface HttpSearchBackendOptions {
  /**
   * The search URL with `{query}` and optionally `{limit}` placeholders, filled URL-encoded, e.g.
   * a SearXNG instance: `https://searx.example/search?q={query}&format=json`.
   */
  urlTemplate: string;
  /** Whole request, connect to last byte. Default 10 000 ms. */
  timeoutMs?: number;
  /** Sent with every request (an API key header, for instance). */
  headers?: Record<string, string>;
  /** Largest response body read. Default 2 MiB. */
  maxBytes?: number;
  /** undici dispatcher (a Pool or an Agent with its own limits); default: undici's global one. */
  dispatcher?: Dispatcher;
}

// The common JSON shapes of search APIs: SearXNG `{results:[{title,url,content}]}`, Google
// Programmable Search `{items:[{title,link,snippet}]}`, or a bare array; extra keys are ignored.
const ApiHit = z.object({
  title: z.string().optional(),
  name: z.string().optional(),
  url: z.string().optional(),
  link: z.string().optional(),
  snippet: z.string().optional(),
  content: z.string().optional(),
  description: z.string().optional(),
});
const ApiResponse = z.union([
  z.array(ApiHit),
  z.object({ results: z.array(ApiHit), number_of_results: z.number().optional() }),
  z.object({ items: z.array(ApiHit), searchInformation: z.object({ totalResults: z.coerce.number().optional() }).optional() }),
]);

/**
 * Characters of a hit's snippet (and title, and url) kept: about what the local index's 24-token snippet
 * gives. Some engines put a page's whole text in `content`: one hit of 1 MB went to the model as
 * a 1 MB observation (only the 2 MiB body limit bounded it).
 */
export const MAX_HIT_TEXT_CHARS = 300;

/** `text` with its runs of white space made one space, cut to `max` characters with "…" (never inside a surrogate pair). */
function hitText(text: string, max = MAX_HIT_TEXT_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  return `${textHead(flat, max - 1).trimEnd()}…`;
}

/**
 * The search API sent no headers, or not its whole body, within the backend's `timeoutMs`.
 * Without it the model read "search failed: The operation was aborted due to timeout", which
 * does not say who took too long.
 */
export class SearchTimeoutError extends Error {
  readonly code = 'ESEARCHTIMEOUT';
  readonly timeoutMs: number;
  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`search API did not answer within ${timeoutMs} ms`, options);
    this.name = 'SearchTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** undici's own per-phase timers (headersTimeout, bodyTimeout), by code: a dispatcher may come from another copy of undici. */
function isUndiciTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * A search API over HTTP (fetched with undici): GET on the URL template, JSON answer mapped to
 * `SearchHit`s. Non-2xx answers, bodies over `maxBytes`, unknown JSON shapes and timeouts throw
 * (a timeout as SearchTimeoutError; an abort of the caller's signal as that abort).
 */
export class HttpSearchBackend implements SearchBackend {
  private readonly options: HttpSearchBackendOptions;
  readonly label: string;

  constructor(options: HttpSearchBackendOptions) {
    this.options = options;
    if (!options.urlTemplate.includes('{query}')) throw new TypeError('search urlTemplate needs a {query} placeholder');
    this.label = new URL(options.urlTemplate.replace(/\{(query|limit)\}/g, '')).origin;
  }

  async search(query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]> {
    return (await this.answer(query, limit, signal)).hits;
  }

  /** The hits, and the API's total count where it reports one (SearXNG `number_of_results`, Google `totalResults`). */
  async answer(query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer> {
    const url = this.options.urlTemplate.replaceAll('{query}', encodeURIComponent(query)).replaceAll('{limit}', String(limit));
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const deadline = AbortSignal.timeout(timeoutMs);
    let response: { statusCode: number; text: string };
    try {
      response = await this.#get(url, timeoutMs, AbortSignal.any([signal, deadline]));
    } catch (err) {
      // The call's own abort (the request went away, the tool's time limit) is no slow API: it
      // reads as that abort, whatever timer of undici's fired meanwhile.
      if (!signal.aborted && (err === deadline.reason || isUndiciTimeout(err))) throw new SearchTimeoutError(timeoutMs, { cause: err });
      throw err;
    }
    const { statusCode, text } = response;
    // 414 URI Too Long, 431 Request Header Fields Too Large (Node's own servers): the query made
    // the URL too long, which the model can fix, and such an answer often has no body to quote.
    if (statusCode === 414 || statusCode === 431) {
      throw new Error(`search API answered HTTP ${statusCode} (the request is too long for it): the query is ${query.length} characters; search with a few words`);
    }
    if (statusCode < 200 || statusCode > 299) {
      // hitText: one line, cut saying so and never inside a surrogate pair (slice left half an emoji).
      throw new Error(`search API answered HTTP ${statusCode}: ${hitText(text, 200)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // JSON.parse's own message ("Unexpected token '<'") did not say the API answered something else.
      throw new Error(`search API answer is not JSON: ${hitText(text, 200)}`);
    }
    const parsed = ApiResponse.safeParse(json);
    if (!parsed.success) throw new Error('search API answer is not a list of results ({results:[…]}, {items:[…]} or […])');
    const data = parsed.data;
    const raw = Array.isArray(data) ? data : 'results' in data ? data.results : data.items;
    const matches = Array.isArray(data) ? undefined : 'results' in data ? data.number_of_results : data.searchInformation?.totalResults;
    const hits = raw.slice(0, limit).map((hit) => ({
      title: hitText(hit.title ?? hit.name ?? ''),
      // Cut too: a URL has no length limit of its own, and a 10 kB one went into the observation whole.
      url: hitText(hit.url ?? hit.link ?? ''),
      snippet: hitText(hit.snippet ?? hit.content ?? hit.description ?? ''),
    }));
    // A total of 0 beside a page of results is no count: SearXNG says `number_of_results: 0`
    // whenever its engines report none. A smaller non-zero total is one (pages that contain every
    // word, as the bench's stand-in counts them, beside looser matches).
    return matches !== undefined && Number.isFinite(matches) && (matches > 0 || raw.length === 0) ? { hits, matches } : { hits };
  }

  /** The status and body text, at most `maxBytes` of it; rejects with undici's error or `signal`'s reason. */
  async #get(url: string, timeoutMs: number, signal: AbortSignal): Promise<{ statusCode: number; text: string }> {
    const maxBytes = this.options.maxBytes ?? 2 * 1024 * 1024;
    const response = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', ...this.options.headers },
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        response.body.destroy();
        throw new Error(`search API answer is larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return { statusCode: response.statusCode, text: Buffer.concat(chunks).toString('utf8') };
  }
}
