import { describe, expect, it } from 'vitest';
import { promptTokenIds } from '../../sim/chat-prompt.ts';
import { BLOCK_TOKENS, PrefixCache } from '../../sim/prefix-cache.ts';
import { startSim } from '../../sim/sim-server.ts';
import { postChat } from './sim-test-helpers.ts';

const ids = (n: number, from = 1000) => Array.from({ length: n }, (_, i) => from + i);

describe('PrefixCache (vLLM automatic prefix caching, in 16-token blocks)', () => {
  it('finds the longest run of leading full blocks it holds', () => {
    const cache = new PrefixCache(10_000);
    expect(cache.admit(ids(100))).toBe(0);
    // The same prompt again: every full block, never the last token (its logits start the decode).
    expect(cache.admit(ids(100))).toBe(96);
    expect(cache.admit(ids(96))).toBe(95);
    // A longer conversation that starts with it: its six full blocks.
    expect(cache.admit([...ids(100), ...ids(60, 5000)])).toBe(96);
    // Diverging in the 40th token: only the two blocks before it.
    const diverged = ids(100);
    diverged[39] = 7;
    expect(cache.admit(diverged)).toBe(32);
    // A different first token: nothing, however much else is equal.
    expect(cache.admit([1, ...ids(99, 1001)])).toBe(0);
  });

  it('evicts the least recently used blocks beyond its capacity, and caches nothing at 0', () => {
    const cache = new PrefixCache(4 * BLOCK_TOKENS);
    cache.admit(ids(32, 1)); // blocks A1 A2
    cache.admit(ids(32, 100)); // blocks B1 B2: full
    expect(cache.admit(ids(32, 1))).toBe(31); // A touched again: B is now the oldest
    cache.admit(ids(32, 200)); // C evicts B
    expect(cache.cachedTokens).toBe(4 * BLOCK_TOKENS);
    expect(cache.admit(ids(32, 1))).toBe(31);
    expect(cache.admit(ids(32, 100))).toBe(0);
    expect(new PrefixCache(0).admit(ids(64))).toBe(0);
  });

  it("shares a conversation's earlier rounds with its next: the prompt only grows at the end", () => {
    const round1 = [
      { role: 'system', content: 'You are a careful assistant. '.repeat(20) },
      { role: 'user', content: 'Search for hello world in three languages.' },
    ];
    const round2 = [...round1, { role: 'assistant', content: 'Searching.' }, { role: 'tool', content: 'hello.py: print("hello")' }];
    const first = promptTokenIds(round1);
    const second = promptTokenIds(round2);
    expect(second.slice(0, first.length)).toEqual(first);
    const cache = new PrefixCache(10_000);
    cache.admit(first);
    expect(cache.admit(second)).toBe(first.length - (first.length % BLOCK_TOKENS));
  });
});

describe('the simulator server: prefix cache on the wire', () => {
  it('reports hits in /sim/counters and /metrics, and forgets them on POST /reset_prefix_cache (as vLLM)', async () => {
    const sim = await startSim({ profile: 'fast-test' });
    try {
      const ask = async () => {
        const res = await postChat(sim.url, { model: 'mistral-7b-instruct-sim', max_tokens: 2, messages: [{ role: 'user', content: 'Tell me about the sea. '.repeat(20) }] });
        expect(res.status).toBe(200);
        await res.json();
        return sim.counters().prefixCacheHits;
      };
      expect(await ask()).toBe(0);
      const warm = await ask();
      expect(warm).toBeGreaterThan(100);
      const reset = await fetch(new URL('/reset_prefix_cache', sim.url), { method: 'POST' });
      expect(reset.status).toBe(200);
      expect(await ask()).toBe(warm);
      const metrics = await (await fetch(new URL('/metrics', sim.url))).text();
      expect(metrics).toMatch(new RegExp(`^vllm:prefix_cache_hits_total\\{[^}]*\\} ${warm}\\.0$`, 'm'));
      expect(metrics).toMatch(/^vllm:prefix_cache_queries_total\{[^}]*\} \d+\.0$/m);
    } finally {
      await sim.close();
    }
  });

  it('prefills every prompt whole with the cache off', async () => {
    const sim = await startSim({ profile: 'fast-test', prefixCacheTokens: 0 });
    try {
      for (let i = 0; i < 2; i++) await (await postChat(sim.url, { model: 'mistral-7b-instruct-sim', max_tokens: 1, messages: [{ role: 'user', content: 'Same again. '.repeat(30) }] })).json();
      expect(sim.counters()).toMatchObject({ prefixCacheHits: 0, prefixCacheQueries: 0 });
    } finally {
      await sim.close();
    }
  });
});
