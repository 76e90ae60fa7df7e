import { openSqlite, type SqliteDatabase, type SqliteStatement } from '../sqlite-driver.ts';
import type { SearchBackend, SearchHit } from './search-backend.ts';

/**
 * The index layout, shared by the builder and the reader. `url` is stored but not indexed;
 * porter stemming makes "printing" find "print"; diacritics fold so "resume" finds "résumé";
 * "+" and "#" are word characters so "C++" and "C#" are not the letter "c". Marks (M*) are word
 * characters too: unicode61's default (L* N* Co) split Devanagari, Tamil or Thai words at every
 * vowel sign and virama, so "नमस्ते" was the words "नमस" and "त", and a Hindi query matched any
 * page holding those fragments. Latin combining accents still fold away (remove_diacritics).
 */
export const SEARCH_INDEX_SCHEMA = `
  CREATE VIRTUAL TABLE docs USING fts5(title, url UNINDEXED, body, tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*' tokenchars '+#'");
  CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** bm25 column weights (title, url, body): a query term in a title counts eight body hits. */
const RANK = 'bm25(docs, 8.0, 0.0, 1.0)';
const SNIPPET = "snippet(docs, 2, '**', '**', '…', 24)";
/**
 * Distinct words searched at most: bounds the FTS5 expression (a 1 MB query of distinct words
 * would be an OR of 200 000 terms). The rest are reported as ignored (queryWords), because the
 * page count claims "every word" and a plan's `$n` computes with it.
 */
export const MAX_QUERY_WORDS = 32;
/** A row is a page section; its page is its URL without the `#section` fragment. */
const PAGE_OF_ROW = "CASE WHEN instr(url, '#') > 0 THEN substr(url, 1, instr(url, '#') - 1) ELSE url END";

/**
 * How the index splits text into words: `marks` for SEARCH_INDEX_SCHEMA's tokenizer, `legacy` for
 * an index built before marks were word characters (its words split at them; a query must split
 * the same way to match them, until the index is rebuilt).
 */
export type WordSplitting = 'marks' | 'legacy';

const WORDS: Record<WordSplitting, RegExp> = { marks: /[\p{L}\p{M}\p{N}+#]+/gu, legacy: /[\p{L}\p{N}+#]+/gu };

/**
 * The distinct words of free text as the index matches them (NFKC, lower case), in order of
 * first appearance: the first MAX_QUERY_WORDS are `searched`, the rest `ignored`.
 */
export function queryWords(text: string, splitting: WordSplitting = 'marks'): { searched: string[]; ignored: string[] } {
  const words = (text.normalize('NFKC').match(WORDS[splitting]) ?? []).filter((w) => /[\p{L}\p{N}]/u.test(w));
  const distinct = [...new Set(words.map((w) => w.toLowerCase()))];
  return { searched: distinct.slice(0, MAX_QUERY_WORDS), ignored: distinct.slice(MAX_QUERY_WORDS) };
}

/**
 * Turns free text into an FTS5 query: each word becomes a quoted term (so `AND`, `"`, `*`,
 * `NEAR` or a stray `(` in the model's query are words, never syntax errors), OR-ed together so
 * bm25 ranks pages that match more and rarer terms first (`every`: AND-ed, for counting the
 * pages that contain all of them). Only queryWords' `searched` words take part. Returns
 * undefined when the text has no word at all.
 */
export function toFtsQuery(text: string, match: 'any' | 'every' = 'any', splitting: WordSplitting = 'marks'): string | undefined {
  const { searched } = queryWords(text, splitting);
  if (searched.length === 0) return undefined;
  return searched.map((w) => `"${w}"`).join(match === 'every' ? ' AND ' : ' OR ');
}

/** A read-only handle on an index built by `buildSearchIndex`. */
export class SqliteSearchIndex implements SearchBackend {
  readonly file: string;
  readonly label: string;
  readonly #db: SqliteDatabase;
  readonly #query: SqliteStatement<[string, number], SearchHit>;
  readonly #count: SqliteStatement<[string], { pages: number }>;
  /** Read from the index's own schema, so an index built by an older version keeps matching. */
  readonly splitting: WordSplitting;

  /** Opens `file` read-only; throws if it is missing or is not a search index. */
  constructor(file: string) {
    this.file = file;
    this.label = `sqlite:${file}`;
    this.#db = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      this.#query = this.#db.prepare(`SELECT title, url, ${SNIPPET} AS snippet FROM docs WHERE docs MATCH ? ORDER BY ${RANK} LIMIT ?`);
      this.#count = this.#db.prepare(`SELECT count(DISTINCT ${PAGE_OF_ROW}) AS pages FROM docs WHERE docs MATCH ?`);
      const schema = this.#db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'docs'").get()?.sql ?? '';
      this.splitting = /categories\s+'[^']*\bM\*/.test(schema) ? 'marks' : 'legacy';
    } catch (err) {
      this.#db.close();
      throw new Error(`${file} is not a search index (${(err as Error).message})`);
    }
  }

  /** Synchronous underneath (SQLite); FTS5 answers in milliseconds even for the full Python docs. */
  async search(text: string, limit: number): Promise<SearchHit[]> {
    return this.searchSync(text, limit);
  }

  /**
   * Sections that contain every word come first, then the rest by bm25. OR alone let a word that
   * is on nearly every page ("Python" in the Python docs) count for nothing: "hello world Python"
   * ranked asyncio's "Hello World with call_soon()" and every other language's hello-world page
   * above Python's own.
   */
  searchSync(text: string, limit: number): SearchHit[] {
    const any = toFtsQuery(text, 'any', this.splitting);
    if (any === undefined) return [];
    const every = toFtsQuery(text, 'every', this.splitting)!;
    if (every === any) return this.#query.all(any, limit);
    const hits = this.#query.all(every, limit);
    if (hits.length === limit) return hits;
    const seen = new Set(hits.map((h) => h.url));
    for (const hit of this.#query.iterate(any, limit + hits.length)) {
      if (seen.has(hit.url)) continue;
      hits.push(hit);
      if (hits.length === limit) break;
    }
    return hits;
  }

  /**
   * How many pages have a section (its title included) that contains every word of `text`: a
   * COUNT over the whole index, not capped by any result limit. The number the `search` tool
   * reports as its result's `data.value`, so a plan step can compute with it (`$1 + $2`).
   * Past MAX_QUERY_WORDS it counts the searched words only (see queryWords).
   */
  countSync(text: string): number {
    const query = toFtsQuery(text, 'every', this.splitting);
    return query === undefined ? 0 : this.#count.get(query)!.pages;
  }

  /** The words of `text` searched, and those past MAX_QUERY_WORDS, left out of the search and the count. */
  queryWords(text: string): { searched: string[]; ignored: string[] } {
    return queryWords(text, this.splitting);
  }

  /** What the builder recorded: source, document count, build time. */
  meta(): Record<string, string> {
    const rows = this.#db.prepare<[], { key: string; value: string }>('SELECT key, value FROM meta').all();
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  close(): void {
    this.#db.close();
  }
}

const opened = new Map<string, SqliteSearchIndex>();

/**
 * The process-wide handle on the index at `file`, opened on first use and then shared: the index
 * is read-only, and a handle cannot travel between hooks in `ctx.state` (worker threads clone it).
 */
export function openSearchIndex(file: string): SqliteSearchIndex {
  let index = opened.get(file);
  if (index === undefined) {
    index = new SqliteSearchIndex(file);
    opened.set(file, index);
  }
  return index;
}
