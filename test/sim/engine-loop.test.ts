import { describe, expect, it } from 'vitest';
import { EngineLoop, stepDurationMs } from '../../sim/engine-loop.ts';
import { EOS_TOKEN_ID, encodeText } from '../../sim/mistral-tokenizer.ts';
import type { TokenEvent } from '../../sim/sequence.ts';
import type { TimingProfile } from '../../sim/timing-profile.ts';
import { PrefixCache } from '../../sim/prefix-cache.ts';
import { ManualClock } from './sim-test-helpers.ts';

// Round numbers so the expected step times can be written down exactly.
const profile: TimingProfile = {
  name: 'unit',
  source: 'test',
  decode: { baseMs: 10, perSeqMs: 1 },
  prefill: { baseMs: 5, perTokenMs: 0.5 },
  maxNumSeqs: 2,
  maxModelLen: 4096,
};

function recorder(clock: ManualClock) {
  const events: Array<TokenEvent & { at: number }> = [];
  let aborted = false;
  return {
    events,
    get aborted() {
      return aborted;
    },
    listener: {
      onToken: (e: TokenEvent) => events.push({ ...e, at: clock.now() }),
      onAborted: () => {
        aborted = true;
      },
    },
  };
}

describe('stepDurationMs', () => {
  it('adds the per-sequence decode cost and, when sequences were admitted, their prefill', () => {
    expect(stepDurationMs(profile, 1, null)).toBe(11);
    expect(stepDurationMs(profile, 3, null)).toBe(13);
    expect(stepDurationMs(profile, 2, 20)).toBe(10 + 2 + 5 + 10);
  });

  it('charges prompt tokens only past prefill.freeTokens (the roofline knee of measured profiles)', () => {
    const knee = { ...profile, prefill: { baseMs: 0, perTokenMs: 0.5, freeTokens: 16 } };
    expect(stepDurationMs(knee, 1, 10)).toBe(11);
    expect(stepDurationMs(knee, 1, 16)).toBe(11);
    expect(stepDurationMs(knee, 1, 20)).toBe(11 + 2);
  });

  it('charges the KV cache the running sequences hold when the profile prices context', () => {
    const withContext = { ...profile, decode: { ...profile.decode, perContextTokenMs: 0.01 } };
    expect(stepDurationMs(withContext, 2, null, 1000)).toBe(10 + 2 + 10);
    expect(stepDurationMs(profile, 2, null, 1000)).toBe(12);
  });

  it("charges a prefill chunk's attention over the context before it when the profile prices it", () => {
    const withPairs = { ...profile, prefill: { ...profile.prefill, perTokenContextMs: 0.001 } };
    expect(stepDurationMs(withPairs, 1, 20, 0, 20 * 500)).toBe(11 + 5 + 10 + 10);
    // Only prefill steps pay it, and a profile without the term ignores the pairs.
    expect(stepDurationMs(withPairs, 1, null, 0, 20 * 500)).toBe(11);
    expect(stepDurationMs(profile, 1, 20, 0, 20 * 500)).toBe(11 + 5 + 10);
  });
});

describe('EngineLoop', () => {
  it('emits the first token at the end of the prefill step, then one token per decode step', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const rec = recorder(clock);
    engine.submit({ promptTokens: 20, outputTokenIds: [100, 200], maxTokens: 100 }, rec.listener);

    clock.advanceTo(1000);
    // prefill step: 10 + 1 + 5 + 0.5 * 20 = 26; decode steps: 11 each.
    expect(rec.events.map((e) => e.at)).toEqual([26, 37, 48]);
    expect(rec.events.map((e) => e.tokenId)).toEqual([100, 200, EOS_TOKEN_ID]);
    expect(rec.events.map((e) => e.finishReason)).toEqual([null, null, 'stop']);
    expect(engine.idle).toBe(true);
    expect(engine.counters()).toMatchObject({ steps: 3, prefillSteps: 1, tokensGenerated: 3, requestsFinished: 1, running: 0 });
  });

  it('prices each step by the context its running sequences hold, not the prompts it admits', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile: { ...profile, decode: { ...profile.decode, perContextTokenMs: 0.5 } }, clock });
    const rec = recorder(clock);
    engine.submit({ promptTokens: 20, outputTokenIds: [100, 200], maxTokens: 100 }, rec.listener);
    clock.advanceTo(1000);
    // prefill step: 26 as without context; then 11 + 0.5 × 21 (prompt + 1 token) and 11 + 0.5 × 22.
    expect(rec.events.map((e) => e.at)).toEqual([26, 47.5, 69.5]);
  });

  it('cuts the plan at max_tokens with finish_reason length', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const rec = recorder(clock);
    engine.submit({ promptTokens: 1, outputTokenIds: [100, 200, 300], maxTokens: 2 }, rec.listener);
    clock.advanceTo(1000);
    expect(rec.events.map((e) => [e.tokenId, e.finishReason, e.completionTokens])).toEqual([
      [100, null, 1],
      [200, 'length', 2],
    ]);
    expect(engine.counters().finishedLength).toBe(1);
  });

  it('schedules against absolute targets, so a late timer does not delay the following steps', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const rec = recorder(clock);
    engine.submit({ promptTokens: 0, outputTokenIds: [1000, 1001, 1002, 1003], maxTokens: 100 }, rec.listener);
    // Prefill step 10 + 1 + 5 = 16, then 11 per step; every timer fires 4 ms late.
    clock.fireNext(4);
    expect(clock.now()).toBe(20);
    expect(clock.pending()).toEqual([27]); // 16 + 11, not 20 + 11
    clock.fireNext(4);
    expect(clock.pending()).toEqual([38]);
    expect(engine.counters().scheduleSlips).toBe(0);
  });

  it('re-anchors on the current time when it falls more than a whole step behind', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    engine.submit({ promptTokens: 0, outputTokenIds: [1000, 1001, 1002], maxTokens: 100 }, recorder(clock).listener);
    clock.fireNext(30); // due at 16, runs at 46: the next target 27 is already past
    expect(clock.pending()).toEqual([57]);
    expect(engine.counters().scheduleSlips).toBe(1);
  });

  it('admits a request that arrives mid-step at the next boundary and batches it with the running one', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const a = recorder(clock);
    const b = recorder(clock);
    engine.submit({ promptTokens: 0, outputTokenIds: [1000, 1001, 1002, 1003, 1004], maxTokens: 100 }, a.listener);
    clock.advanceTo(20); // inside A's second step (16..27)
    engine.submit({ promptTokens: 10, outputTokenIds: [2000], maxTokens: 100 }, b.listener);
    expect(engine.counters()).toMatchObject({ running: 1, waiting: 1 });

    clock.advanceTo(27);
    expect(engine.counters()).toMatchObject({ running: 2, waiting: 0 });
    // The shared step: 10 + 2 * 1 + prefill (5 + 0.5 * 10) = 22, so it ends at 49.
    expect(clock.pending()).toEqual([49]);
    clock.advanceTo(1000);
    expect(b.events[0]!.at).toBe(49);
    expect(a.events.map((e) => e.at)).toContain(49);
    expect(engine.counters().maxBatchOccupancy).toBe(2);
  });

  it('queues requests beyond maxNumSeqs until a sequence leaves', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const recs = [recorder(clock), recorder(clock), recorder(clock)];
    const plan = { promptTokens: 0, outputTokenIds: [1000, 1001], maxTokens: 100 };
    engine.submit(plan, recs[0]!.listener);
    engine.submit(plan, recs[1]!.listener);
    engine.submit(plan, recs[2]!.listener);
    clock.fireNext();
    clock.fireNext();
    expect(engine.counters()).toMatchObject({ running: 2, waiting: 1, maxWaiting: 2 });
    expect(recs[2]!.events).toHaveLength(0);
    clock.advanceTo(10_000);
    expect(recs.every((r) => r.events.at(-1)?.finishReason === 'stop')).toBe(true);
    expect(engine.counters()).toMatchObject({ maxBatchOccupancy: 2, requestsFinished: 3, running: 0, waiting: 0 });
  });

  it('drops an aborted sequence at the next step boundary, without emitting its pending token', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const rec = recorder(clock);
    const handle = engine.submit({ promptTokens: 0, outputTokenIds: [1000, 1001, 1002], maxTokens: 100 }, rec.listener);
    clock.fireNext();
    handle.abort();
    expect(engine.counters()).toMatchObject({ running: 1, abortedSequences: 0 });
    clock.fireNext();
    expect(rec.events).toHaveLength(1);
    expect(engine.counters()).toMatchObject({ running: 0, abortedSequences: 1, requestsFinished: 0 });
    expect(engine.idle).toBe(true);
  });

  it('removes an aborted queued request at once', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile: { ...profile, maxNumSeqs: 1 }, clock });
    engine.submit({ promptTokens: 0, outputTokenIds: [1000], maxTokens: 100 }, recorder(clock).listener);
    clock.advanceTo(1); // mid-step: the next request must queue
    const queued = engine.submit({ promptTokens: 0, outputTokenIds: [1000], maxTokens: 100 }, recorder(clock).listener);
    expect(engine.counters().waiting).toBe(1);
    queued.abort();
    expect(engine.counters()).toMatchObject({ waiting: 0, abortedSequences: 1 });
  });

  it('close() aborts everything and tells the listeners', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock });
    const rec = recorder(clock);
    engine.submit({ promptTokens: 0, outputTokenIds: encodeText('hello there'), maxTokens: 100 }, rec.listener);
    engine.close();
    expect(rec.aborted).toBe(true);
    expect(clock.pending()).toEqual([]);
    expect(() => engine.submit({ promptTokens: 0, outputTokenIds: [], maxTokens: 1 }, rec.listener)).toThrow();
  });
});

describe('EngineLoop with a prefix cache', () => {
  it('prefills only the tokens the cache does not hold, and counts queries and hits as vLLM does', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile, clock, prefixCache: new PrefixCache(10_000) });
    const firstTokens: number[] = [];
    const prompt = Array.from({ length: 100 }, (_, i) => 1000 + i);
    const plan = { promptTokens: 100, promptTokenIds: prompt, outputTokenIds: [100], maxTokens: 1 };
    const listener = { onToken: (e: TokenEvent) => e.completionTokens === 1 && firstTokens.push(clock.now()) };
    engine.submit(plan, listener);
    clock.advanceTo(1000);
    engine.submit(plan, listener);
    clock.advanceTo(2000);
    // Cold: 10 + 1 + 5 + 0.5 × 100 = 66 ms. Warm: 96 tokens cached, 4 prefilled: 10 + 1 + 5 + 2 = 18 ms.
    expect(firstTokens).toEqual([66, 1018]);
    expect(engine.counters()).toMatchObject({ promptTokens: 200, prefixCacheQueries: 200, prefixCacheHits: 96 });
  });

  it("charges a resumed conversation's new tokens their attention over the cached prefix (prefill.perTokenContextMs)", () => {
    const clock = new ManualClock();
    const priced = { ...profile, prefill: { ...profile.prefill, perTokenContextMs: 0.001 } };
    const engine = new EngineLoop({ profile: priced, clock, prefixCache: new PrefixCache(10_000) });
    const firstTokens: number[] = [];
    const listener = { onToken: (e: TokenEvent) => e.completionTokens === 1 && firstTokens.push(clock.now()) };
    const turn = Array.from({ length: 1000 }, (_, i) => 1000 + i);
    engine.submit({ promptTokens: 1000, promptTokenIds: turn, outputTokenIds: [100], maxTokens: 1 }, listener);
    clock.advanceTo(1000);
    // The same conversation with a 40-token tool result appended: 992 tokens (62 blocks) cached.
    const resumed = [...turn, ...Array.from({ length: 40 }, (_, i) => 5000 + i)];
    engine.submit({ promptTokens: 1040, promptTokenIds: resumed, outputTokenIds: [100], maxTokens: 1 }, listener);
    clock.advanceTo(2000);
    // Cold: 10 + 1 + 5 + 0.5 × 1000 (no context before the prompt) = 516 ms. Resumed: 48 new tokens
    // over 992 cached ones: 10 + 1 + 5 + 0.5 × 48 + 0.001 × 48 × 992 = 87.616 ms.
    expect(firstTokens[0]).toBe(516);
    expect(firstTokens[1]! - 1000).toBeCloseTo(10 + 1 + 5 + 24 + 47.616, 9);
  });
});

describe('EngineLoop with a token budget per step (chunked prefill, maxNumBatchedTokens)', () => {
  const budgeted: TimingProfile = { ...profile, maxNumSeqs: 4, maxNumBatchedTokens: 40 };

  it('prefills a long prompt in chunks over several steps while the running sequence keeps decoding', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile: budgeted, clock });
    const a = recorder(clock);
    const b = recorder(clock);
    engine.submit({ promptTokens: 0, outputTokenIds: [1000, 1001, 1002, 1003, 1004, 1005], maxTokens: 100 }, a.listener);
    clock.advanceTo(1); // inside A's first step (0..16: 10 + 1 + prefill 5)
    engine.submit({ promptTokens: 100, outputTokenIds: [2000], maxTokens: 100 }, b.listener);
    clock.advanceTo(1000);
    // From 16 A decodes one token a step (1 of the 40-token budget) and B's 100-token prompt takes
    // 39 + 39 + 22 tokens: steps of 10 + 1 + 5 + 19.5 = 35.5, 35.5, then 10 + 2 + 5 + 11 = 28 with
    // B's first token. Without a budget B would have its first token after one step of 66.
    expect(b.events[0]!.at).toBe(16 + 35.5 + 35.5 + 28);
    expect(a.events.map((e) => e.at).slice(0, 4)).toEqual([16, 51.5, 87, 115]);
    expect(engine.counters()).toMatchObject({ prefillSteps: 4, promptTokens: 100 });
  });

  it("charges a long prompt's later chunks their attention over its earlier ones", () => {
    const clock = new ManualClock();
    const priced = { ...budgeted, prefill: { ...budgeted.prefill, perTokenContextMs: 0.01 } };
    const engine = new EngineLoop({ profile: priced, clock });
    const firstAt: number[] = [];
    engine.submit({ promptTokens: 100, outputTokenIds: [2000], maxTokens: 1 }, { onToken: () => firstAt.push(clock.now()) });
    clock.advanceTo(1000);
    // Chunks of 40, 40, 20: 10 + 5 + 20 (+ 0) = 35, then 35 + 0.01 × 40 × 40 = 51, then
    // 10 + 1 + 5 + 10 + 0.01 × 20 × 80 = 42.
    expect(firstAt).toEqual([35 + 51 + 42]);
  });

  it('admits waiting requests only while the step has budget left, in arrival order', () => {
    const clock = new ManualClock();
    const engine = new EngineLoop({ profile: budgeted, clock });
    const firstAt: number[] = [];
    for (let i = 0; i < 3; i++) {
      engine.submit({ promptTokens: 30, outputTokenIds: [3000 + i], maxTokens: 1 }, { onToken: () => firstAt.push(clock.now()) });
    }
    clock.advanceTo(1000);
    // Step 1 (started by the first request alone): its 30 tokens, 10 + 1 + 5 + 15 = 31.
    // Step 2: the second's 30 and 10 of the third (budget 40), only the second emits: 10 + 1 + 5 + 20 = 36.
    // Step 3: the third's last 20: 10 + 1 + 5 + 10 = 26.
    expect(firstAt).toEqual([31, 31 + 36, 31 + 36 + 26]);
  });
});
