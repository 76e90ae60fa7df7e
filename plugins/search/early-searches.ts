import { randomUUID } from 'node:crypto';
import type { PluginContext } from '../kit/define-plugin.ts';
import { asyncAnswer, searchSyncAnswer, type SearchAnswer, type SearchBackend } from './search-backend.ts';

type Early = { query: string; answer: SearchAnswer } | { query: string; error: string };

/** Asynchronous searches started from onPiece, by a random key kept in ctx.state. */
const pending = new Map<string, { query: string; answer: Promise<SearchAnswer> }>();

/**
 * Starts the search for `query` from onPiece. ctx.state must stay structured-cloneable (in
 * runtime `thread` it travels between workers with each hook), so a synchronous backend's answer
 * (SQLite) goes into ctx.state as plain data, and only an asynchronous search's promise (HTTP,
 * an inline plugin) stays in this module.
 */
export function startEarlySearch(ctx: PluginContext, query: string, backend: () => SearchBackend, limit: number): void {
  forgetEarlySearch(ctx);
  let chosen: SearchBackend;
  try {
    chosen = backend();
    const answer = searchSyncAnswer(chosen, query, limit);
    if (answer) {
      ctx.state['early'] = { query, answer } satisfies Early;
      return;
    }
  } catch (err) {
    ctx.state['early'] = { query, error: (err as Error).message } satisfies Early;
    return;
  }
  const answer = asyncAnswer(chosen, query, limit, ctx.signal);
  answer.catch(() => {}); // reported by onEnd; an aborted call never gets there
  const key = randomUUID();
  pending.set(key, { query, answer });
  ctx.state['searchKey'] = key;
}

/** The search started for this call if it was for `query`, else undefined; forgets it either way. */
export function takeEarlySearch(ctx: PluginContext, query: string): Promise<SearchAnswer> | undefined {
  const { early, started } = forgetEarlySearch(ctx);
  if (early?.query === query) return 'error' in early ? Promise.reject(new Error(early.error)) : Promise.resolve(early.answer);
  return started?.query === query ? started.answer : undefined;
}

/** Drops this call's early search (onAbort); returns what there was. */
export function forgetEarlySearch(ctx: PluginContext): { early?: Early; started?: { query: string; answer: Promise<SearchAnswer> } } {
  const early = ctx.state['early'] as Early | undefined;
  const key = ctx.state['searchKey'] as string | undefined;
  delete ctx.state['early'];
  delete ctx.state['searchKey'];
  const started = key === undefined ? undefined : pending.get(key);
  if (key !== undefined) pending.delete(key);
  return { early, started };
}
