import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { sampleDocsSource } from '../../plugins/search/build-search-index.ts';
import { buildSearchIndex } from '../../plugins/search/search-index-builder.ts';
import { createSearchPlugin } from '../../plugins/search/search-plugin.ts';
import { MAX_QUERY_WORDS, queryWords } from '../../plugins/search/sqlite-search-index.ts';
import { samplePagesWithEveryWord } from '../gateway/sample-pages-oracle.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-search-long-');
const indexFile = path.join(dir, 'sample.sqlite');

beforeAll(async () => {
  await buildSearchIndex({ out: indexFile, sources: [sampleDocsSource()] });
});

// 32 distinct words that are all on the sample Python page (and on no other page all together).
const onPythonPage = [
  ...new Set(
    'hello world in python the program is an interpreted language print built function writes its arguments to standard output followed by a newline no main or compilation step needed save this as'.split(' '),
  ),
].slice(0, MAX_QUERY_WORDS);
const search = (query: string) =>
  runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 2 })), {
    pieces: [{ kind: 'field', path: ['query'], value: query }],
    args: { query },
  });

describe('search: a query past the word cap', () => {
  it('keeps the first distinct words for the search and reports the rest as ignored', () => {
    const words = Array.from({ length: MAX_QUERY_WORDS + 3 }, (_, i) => `w${i}`);
    expect(queryWords(`${words.join(' ')} W0 w1`)).toEqual({ searched: words.slice(0, MAX_QUERY_WORDS), ignored: words.slice(MAX_QUERY_WORDS) });
  });

  it('does not claim that pages contain every word when a word past the cap was not searched', async () => {
    expect(onPythonPage).toHaveLength(MAX_QUERY_WORDS);
    expect(samplePagesWithEveryWord(onPythonPage)).toHaveLength(1);
    // The regression: the 33rd word was dropped silently, and "1 page contains every word" went
    // to the model and, as data.value, into a plan's $n, though no page has "xyzzyneverappears".
    const run = await search(`${onPythonPage.join(' ')} xyzzyneverappears`);
    expect(run.result?.ok).toBe(true);
    expect(run.result?.data).not.toHaveProperty('value');
    expect(run.result?.data).toMatchObject({ ignoredWords: 1 });
    const lines = run.result!.content.split('\n');
    expect(lines.at(-2)).toMatch(/^1 page contains every searched word of "hello world/);
    expect(lines.at(-1)).toBe(`Only the first ${MAX_QUERY_WORDS} distinct words of the query were searched; this one was ignored: "xyzzyneverappears".`);
  });

  it('keeps a count of 0 as the value: no page has the searched words, so none has them all', async () => {
    const run = await search(`xyzzyneverappears ${onPythonPage.join(' ')}`);
    expect(run.result?.data).toMatchObject({ value: 0, ignoredWords: 1 });
    expect(run.result?.content.split('\n').at(-1)).toMatch(/this one was ignored: "as"\.$/);
  });

  it('names at most ten ignored words and counts the rest', async () => {
    const extra = Array.from({ length: 15 }, (_, i) => `extra${i}`);
    const run = await search([...onPythonPage, ...extra].join(' '));
    expect(run.result?.content.split('\n').at(-1)).toBe(
      `Only the first ${MAX_QUERY_WORDS} distinct words of the query were searched; these 15 were ignored: "${extra.slice(0, 10).join(' ')}" and 5 more.`,
    );
  });
});

describe('search: a huge query', () => {
  it('quotes a shortened query in the observation, saying how long it was', async () => {
    const query = 'hello '.repeat(200_000);
    const run = await search(query);
    expect(run.result?.ok).toBe(true);
    expect(run.result!.content.length).toBeLessThan(2_000);
    expect(run.result?.content.split('\n').at(-1)).toBe(`20 pages contain every word of ${JSON.stringify(`${query.slice(0, 200)}…`)} (1200000 characters).`);
    const none = await search(`zzyzx${' quux'.repeat(1000)}`);
    expect(none.result?.content).toMatch(/^No results for "zzyzx quux quux[^"]*…" \(5005 characters\)\.$/);
  });
});
