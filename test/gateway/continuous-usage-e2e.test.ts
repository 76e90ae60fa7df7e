import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { eventually, SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

/** The validation scenario: round 1's call is rejected at its location field and cut there; rounds 2 and 3 run whole. */
const scenario = JSON.parse(readFileSync(new URL('../../sim/scenarios/validation.json', import.meta.url), 'utf8')) as { rules: Array<{ reply: string }> };
const INVALID_CALL = scenario.rules[0]!.reply;
const THROUGH_BAD_FIELD = INVALID_CALL.slice(0, INVALID_CALL.indexOf('"Paris"') + '"Paris"'.length);
const USER = 'What is the local news in Paris?';
const body = { model: SIM_MODEL, scenario: 'validation', messages: [{ role: 'user', content: USER }] };
const onlyValidator = { python: false, search: false, database: false, plan: false, calculator: false, http_get: false } as const;

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

describe('upstream.continuousUsage: a round cut short still counts in usage', () => {
  let plain: ConveyorHandle;
  let continuous: ConveyorHandle;
  beforeAll(async () => {
    [plain, continuous] = await Promise.all([
      startTestConveyor({ plugins: onlyValidator }),
      startTestConveyor({ plugins: onlyValidator, gateway: { upstream: { continuousUsage: true } } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([plain?.close(), continuous?.close()]);
  });

  async function usageOf(conveyor: ConveyorHandle): Promise<{ usage: Usage; cutRoundTokens: number; prompted: number }> {
    const before = conveyor.sim!.counters();
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(3);
    // Rounds 2 and 3 decode whole replies; what the sim generated beyond them is round 1's, up to its abort.
    await eventually(() => conveyor.sim!.counters().running === 0, 'the sim is idle');
    const after = conveyor.sim!.counters();
    const generated = after.tokensGenerated - before.tokensGenerated;
    // Every round's prompt as the sim received it, the cut round's included.
    const prompted = after.promptTokens - before.promptTokens;
    return { usage: res.json.usage as Usage, cutRoundTokens: generated - (res.json.usage as Usage).completion_tokens, prompted };
  }

  it("adds the cut round's prompt and the tokens decoded before the cut, which plain usage leaves out", async () => {
    const off = await usageOf(plain);
    const on = await usageOf(continuous);
    // Without usage on every chunk the cut round is missing: only rounds 2 and 3 are counted.
    expect(off.cutRoundTokens).toBeGreaterThanOrEqual(encodeText(THROUGH_BAD_FIELD).length);

    // Plain usage leaves the cut round's prompt out (it holds the user's message and the chat
    // template); with usage on every chunk, every prompt the sim received is counted. Compared
    // within each run: the later rounds' prompts quote what the cut round decoded before its cut,
    // which differs from run to run (once by exactly 6 tokens, and a comparison across runs failed).
    expect(off.prompted - off.usage.prompt_tokens).toBeGreaterThan(encodeText(USER).length);
    expect(on.usage.prompt_tokens).toBe(on.prompted);
    // The cut round's tokens are from the last chunk the gateway read: at least through the bad
    // field, far less than the whole call (rounds 2 and 3 decode the same replies in both runs).
    const completion = on.usage.completion_tokens - off.usage.completion_tokens;
    expect(completion).toBeGreaterThanOrEqual(encodeText(THROUGH_BAD_FIELD).length);
    expect(completion).toBeLessThan(encodeText(INVALID_CALL).length);
    expect(on.usage.total_tokens).toBe(on.usage.prompt_tokens + on.usage.completion_tokens);
    expect(on.cutRoundTokens).toBeLessThanOrEqual(3); // nearly all of what the sim generated is counted
  });

  it("gives a client that asks continuous_usage_stats the usage so far on every chunk, the cut round's included", async () => {
    const off = await usageOf(plain);
    const streamed = await streamChat(plain.gateway.url, { ...body, stream_options: { include_usage: true, continuous_usage_stats: true } });
    expect(streamed.status).toBe(200);
    expect(streamed.done).toBe(true);
    const first = streamed.chunks.findIndex((c) => c.usage);
    expect(first).toBeGreaterThan(0); // the role chunk goes out before the upstream's first usage
    const rest = streamed.chunks.slice(first);
    expect(rest.every((c) => c.usage)).toBe(true);
    const completion = rest.map((c) => c.usage!.completion_tokens);
    expect(completion).toEqual([...completion].sort((a, b) => a - b)); // never goes back
    const final = rest.at(-1)!;
    expect(final.choices).toEqual([]);
    expect(final.usage).toEqual(rest.at(-2)!.usage); // the finish chunk already had the total
    // The client's own request for it reached the upstream: the cut round counts.
    expect(final.usage!.prompt_tokens).toBeGreaterThan(off.usage.prompt_tokens);
    expect(final.usage!.total_tokens).toBe(final.usage!.prompt_tokens + final.usage!.completion_tokens);
  });

  it('streams the same totals in the usage chunk, and no usage on the content chunks', async () => {
    const off = await usageOf(plain);
    const streamed = await streamChat(continuous.gateway.url, { ...body, stream_options: { include_usage: true } });
    expect(streamed.status).toBe(200);
    const withUsage = streamed.chunks.filter((c) => c.usage);
    expect(withUsage).toHaveLength(1);
    expect(withUsage[0]!.choices).toEqual([]);
    expect((withUsage[0]!.usage as Usage).prompt_tokens).toBeGreaterThan(off.usage.prompt_tokens);
  });
});
