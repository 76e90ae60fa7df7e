import type { ToolResult } from '../plugin-types.ts';
import type { SearchAnswer } from './search-backend.ts';
import { textHead } from './text-head.ts';

/** Characters of the query quoted back at most: a 1 MB query must not be echoed whole into the timeline. */
const QUOTED_QUERY_CHARS = 200;
/** Ignored words named at most; the rest are counted. */
const NAMED_IGNORED_WORDS = 10;

/** `text` JSON-quoted, cut to `max` characters (never inside a surrogate pair) and saying how long it was. */
export function quoteShortened(text: string, max = QUOTED_QUERY_CHARS): string {
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(`${textHead(text, max)}…`)} (${text.length} characters)`;
}

/** Says which words were left out, so "no results" or a count is never read as covering them. */
function ignoredNote(ignored: readonly string[], searched: number | undefined): string {
  const named = quoteShortened(ignored.slice(0, NAMED_IGNORED_WORDS).join(' '));
  const more = ignored.length > NAMED_IGNORED_WORDS ? ` and ${ignored.length - NAMED_IGNORED_WORDS} more` : '';
  const first = searched === undefined ? 'Only the first distinct words' : `Only the first ${searched} distinct words`;
  return `${first} of the query were searched; ${ignored.length === 1 ? 'this one was' : `these ${ignored.length} were`} ignored: ${named}${more}.`;
}

/**
 * The observation the model sees: numbered hits, one title/url/snippet block each, then the
 * count of pages matching every word when the backend knows it (the hits are ranked by any
 * word), then which words were not searched, if any.
 */
export function searchObservation(query: string, answer: SearchAnswer): string {
  const { hits, matches, ignoredWords = [], searchedWords } = answer;
  const quoted = quoteShortened(query);
  const lines =
    hits.length === 0
      ? [`No results for ${quoted}.`]
      : hits.map((hit, i) => `${i + 1}. ${hit.title}\n   ${hit.url}\n   ${hit.snippet}`);
  if (hits.length > 0 && matches !== undefined) {
    const every = ignoredWords.length === 0 ? 'every word' : 'every searched word';
    lines.push(`${matches} ${matches === 1 ? 'page contains' : 'pages contain'} ${every} of ${quoted}.`);
  }
  if (ignoredWords.length > 0) lines.push(ignoredNote(ignoredWords, searchedWords));
  return lines.join('\n');
}

/**
 * The `search` tool's result. `data.value` (what a plan's `$n` stands for) is the count of pages
 * with every word of the query; when words were ignored the count covers only the searched ones,
 * an upper bound, so it is given as the value only when it is 0 (then exact), and `$n` gets the
 * observation text instead, which says what was searched.
 */
export function searchResult(query: string, answer: SearchAnswer, early: boolean): ToolResult {
  // "No results" with a count of 0 read as the corpus lacking it, where nothing had been searched.
  if (answer.noWords) {
    return {
      ok: false,
      content: `error: ${quoteShortened(query)} has no word to search for: the index matches words (letters and digits), not symbols or punctuation; describe it in words (e.g. "floor division" for //)`,
    };
  }
  const { hits, matches, ignoredWords = [] } = answer;
  const exact = matches !== undefined && (ignoredWords.length === 0 || matches === 0);
  const data = { hits, early, ...(exact ? { value: matches } : {}), ...(ignoredWords.length === 0 ? {} : { ignoredWords: ignoredWords.length }) };
  return { ok: true, content: searchObservation(query, answer), data };
}
