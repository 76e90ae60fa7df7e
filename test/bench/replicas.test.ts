import { describe, expect, it } from 'vitest';
import { runReplicas } from '../../bench/replicas/run-replicas.ts';

describe('runReplicas (bench/replicas)', () => {
  it('runs conversations over two simulator replicas both ways and reports routing, cache hits and latency', async () => {
    const result = await runReplicas({ quick: true, conversations: 3, passes: 2 });
    const { kept, spread } = result.modes;
    expect(kept.conversations).toBe(3);
    expect(spread.conversations).toBe(3);
    for (const record of result.records) {
      expect(record.ttftMs).toHaveLength(3);
      expect(record.replicas).toHaveLength(3);
    }
    // Kept: every round of a conversation on one replica, so rounds 2 and 3 find the rounds before.
    expect(kept.oneReplicaShare).toBe(1);
    // And the client's next turn goes back to that replica.
    expect(kept.nextTurnSameReplicaShare).toBe(1);
    expect(kept.nextTurnTtftMs.n).toBe(3);
    expect(kept.cacheHitRate).toBeGreaterThan(0.5);
    expect(kept.cacheHitRate).toBeGreaterThanOrEqual(spread.cacheHitRate);
    for (const field of ['e2eMs', 'firstRoundTtftMs', 'laterRoundTtftMs'] as const) {
      expect(kept[field].n).toBeGreaterThan(0);
      expect(Number.isFinite(spread[field].p50)).toBe(true);
    }
    expect(result.markdown).toContain('| prefix cache hit rate (prompt tokens) |');
    expect(result.markdown).toContain('| rounds 2–3 TTFT mean, ms |');
    expect(result.markdown).toContain('| next turn TTFT mean, ms |');
  }, 120_000);
});
