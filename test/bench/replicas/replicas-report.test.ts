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

describe('the replicas report, its opening', () => {
  // run.ts wrote "Command:" and the provenance line after the whole report, and printed the report
  // without them; every other report opens with its title, the command under it.
  it('opens with its title, the command and where it ran under it', () => {
    const origin = { command: 'npx tsx bench/replicas/run.ts --quick', date: '2026-12-01T20:00:00.000Z', node: 'v20.19.0', commit: 'abc1234', cpus: '2 × test', loadavg: [1, 0.5, 0.25] };
    const lines = replicasMarkdown(meta, { kept: mode('kept', [1200, 1300]), spread: mode('spread', [1400]) }, 10, origin).split('\n');
    expect(lines[0]).toBe('# Replicas: conversation affinity vs least-loaded per round');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/replicas/run.ts --quick`  ');
    expect(lines[3]).toBe('2026-12-01T20:00:00.000Z, Node v20.19.0, commit abc1234; 2 × test, load average at the end 1 / 0.5 / 0.25');
    expect(lines.filter((l) => l.startsWith('Command:'))).toHaveLength(1);
  });
});
