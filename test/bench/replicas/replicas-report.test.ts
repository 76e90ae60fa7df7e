import { describe, expect, it } from 'vitest';
import { replicasMarkdown } from '../../../bench/replicas/replicas-report.ts';
import type { ModeResult, ReplicasResult } from '../../../bench/replicas/run-replicas.ts';
import { summarize } from '../../../bench/stats.ts';

const meta: ReplicasResult['meta'] = { profile: 'test', replicas: 2, docTokens: 1000, conversations: 4, passes: 2, ratePerS: 1, promptTokensPerConversation: 9000 };

function mode(m: ModeResult['mode'], conversations: number[]): ModeResult {
  const none = conversations.length === 0;
  return {
    mode: m,
    conversations: conversations.length,
    e2eMs: summarize(conversations),
    firstRoundTtftMs: summarize(conversations),
    laterRoundTtftMs: summarize(conversations),
    cacheHitRate: none ? NaN : 0.8,
    // What summarizeMode gives a mode none of whose conversations finished.
    prefilledTokensPerConversation: none ? NaN : 1800,
    oneReplicaShare: none ? NaN : 1,
    nextTurnTtftMs: summarize(conversations),
    nextTurnSameReplicaShare: none ? NaN : 1,
    replicaShares: none ? [] : [0.5, 0.5],
  };
}

describe('the replicas report', () => {
  it('prints "–" for a mode with no finished conversation, never NaN', () => {
    const markdown = replicasMarkdown(meta, { kept: mode('kept', [1200, 1300]), spread: mode('spread', []) }, 10);
    expect(markdown).not.toMatch(/NaN|Infinity|undefined/);
    expect(markdown).toContain('| prompt tokens prefilled per conversation | 1800 | – | – |');
    expect(markdown).toContain('| rounds per replica | 50.0% / 50.0% | – | |');
  });
});
