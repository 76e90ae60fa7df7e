import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { sampleDocsSource } from '../../plugins/search/build-search-index.ts';
import { buildSearchIndex } from '../../plugins/search/search-index-builder.ts';
import { createSearchPlugin } from '../../plugins/search/search-plugin.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-search-no-words-');
const indexFile = path.join(dir, 'sample.sqlite');

beforeAll(async () => {
  await buildSearchIndex({ out: indexFile, sources: [sampleDocsSource()] });
});

const search = (query: string, streamed = true) =>
  runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile })), {
    pieces: streamed ? [{ kind: 'field', path: ['query'], value: query }] : [],
    args: { query },
  });

// The regression: a query of symbols alone (`//`, `**`, an emoji) searched nothing, yet answered
// "No results for "//"." with data.value 0: the model read that the docs never mention floor
// division, and a plan's $n computed with 0 pages.
describe('search: a query with no word in it', () => {
  it('says nothing was searched and why, with no count, rather than "No results"', async () => {
    for (const streamed of [true, false]) {
      for (const query of ['//', '** ?', '🐍', '   ']) {
        const run = await search(query, streamed);
        expect(run.result?.ok, query).toBe(false);
        expect(run.result?.content, query).toBe(
          `error: ${JSON.stringify(query)} has no word to search for: the index matches words (letters and digits), not symbols or punctuation; describe it in words (e.g. "floor division" for //)`,
        );
        expect(run.result?.data?.['value'], query).toBeUndefined();
      }
    }
    // A symbol beside a word is no problem: the word is searched.
    expect((await search('python //')).result?.ok).toBe(true);
  });
});
