import { Pool } from 'undici';
import type { UpstreamUrl } from './upstream-url.ts';

/**
 * One keep-alive pool per upstream origin or socket (and connect timeout, which undici fixes per
 * pool), so consecutive rounds of a conversation reuse warm sockets instead of reconnecting.
 */
const pools = new Map<string, Pool>();

export function upstreamPool({ origin, socketPath }: Pick<UpstreamUrl, 'origin' | 'socketPath'>, connectMs: number): Pool {
  const key = `${origin} ${socketPath ?? ''} ${connectMs}`;
  let pool = pools.get(key);
  if (pool === undefined || pool.closed || pool.destroyed) {
    pool = new Pool(origin, { connect: { timeout: connectMs, ...(socketPath === undefined ? {} : { socketPath }) } });
    pools.set(key, pool);
  }
  return pool;
}

/**
 * Destroys every shared pool, cutting any stream still open on it (shutdown, test teardown). Those
 * end with a `ShuttingDownError` (upstream-failure.ts): the cut is this process's, so it counts
 * against no replica and moves no request to another one.
 */
export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.destroy()));
}
