/** One search result, as every backend returns it. */
export interface SearchHit {
  title: string;
  url: string;
  /** A short excerpt around the matched terms; matches are wrapped in `**`. */
  snippet: string;
}

/** Where the `search` tool looks things up: the local FTS5 index or an HTTP search API. */
export interface SearchBackend {
  /** A short name for observations and logs (`sqlite:/path` or the URL template's origin). */
  readonly label: string;
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]>;
  /** Present when the backend answers synchronously (SQLite): the plain hits can then travel in ctx.state. */
  searchSync?(query: string, limit: number): SearchHit[];
  /**
   * Present when the backend can count over its whole corpus (SQLite): how many pages contain
   * every word of the query, however many hits `limit` lets through.
   */
  countSync?(query: string): number;
  /** Present when an asynchronous backend can also count (an HTTP API that reports its total). */
  answer?(query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer>;
}

/** What one search found: the ranked hits and, when the backend can count, the pages matching every word. */
export interface SearchAnswer {
  hits: SearchHit[];
  matches?: number;
}

/**
 * The observation the model sees: numbered hits, one title/url/snippet block each, then the
 * count of pages matching every word when the backend knows it (the hits are ranked by any word).
 */
export function formatSearchHits(query: string, hits: readonly SearchHit[], matches?: number): string {
  if (hits.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const list = hits.map((hit, i) => `${i + 1}. ${hit.title}\n   ${hit.url}\n   ${hit.snippet}`).join('\n');
  if (matches === undefined) return list;
  return `${list}\n${matches} ${matches === 1 ? 'page contains' : 'pages contain'} every word of ${JSON.stringify(query)}.`;
}

/** The answer of a synchronous backend (plain data: it may travel in ctx.state); undefined for an asynchronous one. */
export function searchSyncAnswer(backend: SearchBackend, query: string, limit: number): SearchAnswer | undefined {
  if (!backend.searchSync) return undefined;
  const hits = backend.searchSync(query, limit);
  const matches = backend.countSync?.(query);
  return matches === undefined ? { hits } : { hits, matches };
}

/** One search on `backend`: synchronously where it can, else over its async API (with a count where the API gives one). */
export async function searchAnswer(backend: SearchBackend, query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer> {
  return searchSyncAnswer(backend, query, limit) ?? asyncAnswer(backend, query, limit, signal);
}

/** An asynchronous backend's answer: with its count where it has one. */
export async function asyncAnswer(backend: SearchBackend, query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer> {
  return backend.answer ? backend.answer(query, limit, signal) : { hits: await backend.search(query, limit, signal) };
}
