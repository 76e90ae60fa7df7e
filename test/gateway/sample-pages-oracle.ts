import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SAMPLE_DOCS_DIR } from '../../plugins/search/build-search-index.ts';

/**
 * The sample "Hello, World!" pages whose main text contains every one of `words` (whole words,
 * any case), found by reading the HTML with a regex, not through the FTS index: the expected
 * value for the search tool's page count, computed independently of the code under test.
 */
export function samplePagesWithEveryWord(words: readonly string[]): string[] {
  return readdirSync(SAMPLE_DOCS_DIR)
    .filter((name) => name.endsWith('.html'))
    .filter((name) => {
      const html = readFileSync(path.join(SAMPLE_DOCS_DIR, name), 'utf8');
      const main = /<main>([\s\S]*)<\/main>/.exec(html)?.[1] ?? '';
      const text = main.replace(/<[^>]+>/g, ' ');
      return words.every((word) => new RegExp(`\\b${word}\\b`, 'i').test(text));
    });
}
