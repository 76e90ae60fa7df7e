import { Pool } from 'undici';

/**
 * One keep-alive pool per upstream origin (and connect timeout, which undici fixes per pool), so
 * consecutive rounds of a conversation reuse warm sockets instead of reconnecting each time.
 */
const pools = new Map<string, Pool>();

export function upstreamPool(origin: string, connectMs: number): Pool {
  const key = `${origin} ${connectMs}`;
  let pool = pools.get(key);
  if (pool === undefined || pool.closed || pool.destroyed) {
    pool = new Pool(origin, { connect: { timeout: connectMs } });
    pools.set(key, pool);
  }
  return pool;
}

/** Destroys every shared pool, cutting any stream still open on it (shutdown, test teardown). */
export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.destroy()));
}
