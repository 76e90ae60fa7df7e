import { z } from 'zod';
import { definePlugin } from '../kit/define-plugin.ts';
import { forgetEarlySearch, startEarlySearch, takeEarlySearch } from './early-searches.ts';
import { searchAnswer } from './search-backend.ts';
import { searchResult } from './search-observation.ts';
import { lazySearchBackend, searchModuleOptions, type SearchPluginOptions } from './search-options.ts';

/**
 * The `search` tool: the query runs the moment the `query` field is decoded; onEnd only awaits it.
 * Its result's `data.value` is the number of pages that contain every word of the query (local
 * index only: an HTTP search API reports no count), the scalar a plan step's `$n` stands for.
 * The local index searches a query's first MAX_QUERY_WORDS distinct words; past them the
 * observation names the ignored words and the count is no value (searchResult).
 *
 * @example
 * const tool = inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile: 'dist/search-index/python-docs.sqlite' }));
 */
export function createSearchPlugin(options: SearchPluginOptions) {
  const backend = lazySearchBackend(options);
  const limit = options.maxResults ?? 5;
  const run = (query: string, signal: AbortSignal) => Promise.resolve().then(() => searchAnswer(backend(), query, limit, signal));
  return definePlugin({
    name: 'search',
    description: 'Full-text search over the documentation corpus (the Python 3 documentation by default). Returns the best matching pages with a URL and a snippet; matched words are in **bold**.',
    parameters: z.object({ query: z.string().min(1).describe('What to look for, in a few words.') }),
    consumes: 'field',
    // SQLite answers synchronously: keep it off the gateway's event loop. HTTP is plain I/O.
    runtime: options.backend === 'http' ? 'inline' : 'thread',
    limits: { timeoutMs: 20_000 },
    hooks: {
      onPiece(piece, ctx) {
        if (piece.kind !== 'field' || piece.path.join('.') !== 'query' || typeof piece.value !== 'string') return;
        startEarlySearch(ctx, piece.value, backend, limit);
      },
      async onEnd({ query }, ctx) {
        const early = takeEarlySearch(ctx, query);
        try {
          return searchResult(query, await (early ?? run(query, ctx.signal)), early !== undefined);
        } catch (err) {
          return { ok: false, content: `error: search failed: ${(err as Error).message}` };
        }
      },
      onAbort: (_reason, ctx) => void forgetEarlySearch(ctx),
    },
  });
}

/** Configured by this module's URL query (`?index=…` or `?url=…`) or the environment: see searchModuleOptions. */
export default createSearchPlugin(searchModuleOptions(import.meta.url));
