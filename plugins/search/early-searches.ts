import { randomUUID } from 'node:crypto';
import type { PluginContext } from '../kit/define-plugin.ts';
import type { SearchBackend, SearchHit } from './search-backend.ts';

type Early = { query: string; hits: SearchHit[] } | { query: string; error: string };

/** Asynchronous searches started from onPiece, by a random key kept in ctx.state. */
const pending = new Map<string, { query: string; hits: Promise<SearchHit[]> }>();

/**
 * Starts the search for `query` from onPiece. ctx.state must stay structured-cloneable (in
 * runtime `thread` it travels between workers with each hook), so a synchronous backend's hits
 * (SQLite) go into ctx.state as plain data, and only an asynchronous search's promise (HTTP,
 * an inline plugin) stays in this module.
 */
export function startEarlySearch(ctx: PluginContext, query: string, backend: () => SearchBackend, limit: number): void {
  forgetEarlySearch(ctx);
  let chosen: SearchBackend;
  try {
    chosen = backend();
    if (chosen.searchSync) {
      ctx.state['early'] = { query, hits: chosen.searchSync(query, limit) } satisfies Early;
      return;
    }
  } catch (err) {
    ctx.state['early'] = { query, error: (err as Error).message } satisfies Early;
    return;
  }
  const hits = chosen.search(query, limit, ctx.signal);
  hits.catch(() => {}); // reported by onEnd; an aborted call never gets there
  const key = randomUUID();
  pending.set(key, { query, hits });
  ctx.state['searchKey'] = key;
}

/** The search started for this call if it was for `query`, else undefined; forgets it either way. */
export function takeEarlySearch(ctx: PluginContext, query: string): Promise<SearchHit[]> | undefined {
  const { early, started } = forgetEarlySearch(ctx);
  if (early?.query === query) return 'error' in early ? Promise.reject(new Error(early.error)) : Promise.resolve(early.hits);
  return started?.query === query ? started.hits : undefined;
}

/** Drops this call's early search (onAbort); returns what there was. */
export function forgetEarlySearch(ctx: PluginContext): { early?: Early; started?: { query: string; hits: Promise<SearchHit[]> } } {
  const early = ctx.state['early'] as Early | undefined;
  const key = ctx.state['searchKey'] as string | undefined;
  delete ctx.state['early'];
  delete ctx.state['searchKey'];
  const started = key === undefined ? undefined : pending.get(key);
  if (key !== undefined) pending.delete(key);
  return { early, started };
}
