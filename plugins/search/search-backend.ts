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
  /** Present when the backend searches only some of a long query's words: which it searches, which it leaves out. */
  queryWords?(query: string): { searched: string[]; ignored: string[] };
  /** Present when an asynchronous backend can also count (an HTTP API that reports its total). */
  answer?(query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer>;
}

/** What one search found: the ranked hits and, when the backend can count, the pages matching every word. */
export interface SearchAnswer {
  hits: SearchHit[];
  /** Pages that contain every searched word: every word of the query unless `ignoredWords`. */
  matches?: number;
  /** Words of the query the backend did not search (past its word cap); absent when none. */
  ignoredWords?: string[];
  /** With ignoredWords: how many distinct words were searched. */
  searchedWords?: number;
  /** The query has no word the backend searches (symbols alone: `//`, an emoji): nothing was searched. */
  noWords?: true;
}

/** The answer of a synchronous backend (plain data: it may travel in ctx.state); undefined for an asynchronous one. */
export function searchSyncAnswer(backend: SearchBackend, query: string, limit: number): SearchAnswer | undefined {
  if (!backend.searchSync) return undefined;
  const words = backend.queryWords?.(query);
  if (words !== undefined && words.searched.length === 0) return { hits: [], noWords: true };
  const hits = backend.searchSync(query, limit);
  const matches = backend.countSync?.(query);
  const cut = words !== undefined && words.ignored.length > 0 ? { ignoredWords: words.ignored, searchedWords: words.searched.length } : {};
  return { hits, ...(matches === undefined ? {} : { matches }), ...cut };
}

/** One search on `backend`: synchronously where it can, else over its async API (with a count where the API gives one). */
export async function searchAnswer(backend: SearchBackend, query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer> {
  return searchSyncAnswer(backend, query, limit) ?? asyncAnswer(backend, query, limit, signal);
}

/** An asynchronous backend's answer: with its count where it has one. */
export async function asyncAnswer(backend: SearchBackend, query: string, limit: number, signal: AbortSignal): Promise<SearchAnswer> {
  return backend.answer ? backend.answer(query, limit, signal) : { hits: await backend.search(query, limit, signal) };
}
