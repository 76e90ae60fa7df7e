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
}

/** The observation the model sees: numbered hits, one title/url/snippet block each. */
export function formatSearchHits(query: string, hits: readonly SearchHit[]): string {
  if (hits.length === 0) return `No results for ${JSON.stringify(query)}.`;
  return hits.map((hit, i) => `${i + 1}. ${hit.title}\n   ${hit.url}\n   ${hit.snippet}`).join('\n');
}
