import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { verdictOf } from '../../../plugins/kit/check-hook-output.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { childMessageSchema, MAX_REJECT_REASON } from '../../../sandbox/runtimes/plugin-protocol.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import longReject from './fixtures/long-reject-plugin.ts';

// A reject whose reason quotes what the model wrote can be long. Over 10,000 characters it was a
// reject inline and in a thread, but a plugin process's verdict then broke the protocol's limit:
// the process was killed, the decode not cut, and the model read `stopped: protocol error:
// {"t":"verdict",…}`. The kit now cuts the reason where the hook runs, the same in every runtime.

const pools = createRuntimePools({ process: { sparesPerPlugin: 0 } });
afterAll(() => pools.close());

const REASON = `bad text: ${'x'.repeat(20_000)}`;

describe('a reject(reason) longer than a verdict carries', () => {
  it('is cut to MAX_REJECT_REASON, saying so, and fits the wire', () => {
    const checked = verdictOf('p', { verdict: 'reject', reason: REASON });
    if (!('verdict' in checked)) throw new Error(checked.error);
    const reason = checked.verdict!.reason;
    expect(reason.length).toBeLessThanOrEqual(MAX_REJECT_REASON);
    expect(reason.startsWith('bad text: xxx')).toBe(true);
    expect(reason).toMatch(/the reason was 20010 characters, cut at 10000\]$/);
    expect(childMessageSchema.safeParse({ t: 'verdict', callId: 'c', seq: 1, reject: reason }).success).toBe(true);
    expect(verdictOf('p', { verdict: 'reject', reason: 'short' })).toEqual({ verdict: { verdict: 'reject', reason: 'short' } });
  });

  for (const runtime of ['inline', 'process'] as const) {
    it(`rejects the call in runtime ${runtime}, as every runtime does`, async () => {
      const moduleUrl = new URL('./fixtures/long-reject-plugin.ts', import.meta.url);
      const tool = toolFromPlugin({ ...longReject, runtime }, { moduleUrl, pools });
      const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['text'], value: 'a' }], args: { text: 'a' } });
      expect(run.result).toBeUndefined();
      expect(run.rejected).toMatch(/^bad text: x+ \[…; the reason was 20010 characters, cut at 10000\]$/);
    }, 60_000);
  }
});
