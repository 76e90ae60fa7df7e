import path from 'node:path';
import { sampleDocsSource } from '../../plugins/search/build-search-index.ts';
import { buildSearchIndex } from '../../plugins/search/search-index-builder.ts';

/** Builds the shipped sample docs' search index (the one `npm start` uses) into `dir`; returns its path. */
export async function buildSampleSearchIndex(dir: string, name = 'sample-docs.sqlite'): Promise<string> {
  const index = path.join(dir, name);
  await buildSearchIndex({ out: index, sources: [sampleDocsSource()] });
  return index;
}
