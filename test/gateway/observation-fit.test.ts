import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { capThatDrops, MIN_OBSERVATION_BYTES, observationCapToFit, recutRound } from '../../gateway/observation-fit.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

describe('capThatDrops', () => {
  it('cuts the largest first, to the largest cap that drops enough', () => {
    // Above 300: 700 + 200 = 900 ≥ 900; above 301: 898.
    expect(capThatDrops([1000, 500, 100], 900, 50)).toBe(300);
    expect(capThatDrops([1000, 500, 100], 1, 50)).toBe(999);
    expect(capThatDrops([1000, 500, 100], 0, 50)).toBe(1000);
  });

  it('gives up when the floor does not drop enough', () => {
    expect(capThatDrops([1000, 500], 1100, 200)).toBe(200);
    expect(capThatDrops([1000, 500], 1101, 200)).toBeUndefined();
    expect(capThatDrops([], 1, 200)).toBeUndefined();
  });
});

describe('observationCapToFit', () => {
  const prompt = [{ role: 'user' as const, content: 'x'.repeat(4000) }];

  it('frees the tokens over the context plus room for the reply, estimated from the prompt', () => {
    // 4,000 bytes in 1,000 tokens: 4 bytes a token. Over by 100, plus 256 (a quarter of 1,024) for the reply.
    const cap = observationCapToFit({ maxModelLen: 1024, inputTokens: 1124 }, prompt, ['a'.repeat(3000)], undefined)!;
    expect(3000 - cap).toBeGreaterThanOrEqual(356 * 4);
    expect(3000 - cap).toBeLessThanOrEqual(Math.ceil(356 * 4 * 1.25));
  });

  it("leaves the reply what is left of the request's max_tokens when that is less", () => {
    const withBudget = observationCapToFit({ maxModelLen: 1024, inputTokens: 1124 }, prompt, ['a'.repeat(3000)], 10)!;
    const without = observationCapToFit({ maxModelLen: 1024, inputTokens: 1124 }, prompt, ['a'.repeat(3000)], undefined)!;
    expect(withBudget).toBeGreaterThan(without);
  });

  it('is undefined when the prompt already leaves the reply its room, or cutting cannot free enough', () => {
    expect(observationCapToFit({ maxModelLen: 4096, inputTokens: 1000 }, prompt, ['a'.repeat(3000)], 100)).toBeUndefined();
    expect(observationCapToFit({ maxModelLen: 1024, inputTokens: 2000 }, prompt, ['a'.repeat(300)], undefined)).toBeUndefined();
  });

  it('recutRound cuts every result to the cap and leaves the rest of the round alone', () => {
    const out = { text: 'hi', calls: [{ callId: 'c1', name: 't', args: {}, result: { ok: true, content: 'é'.repeat(1000), data: { big: true } } }] };
    const cut = recutRound(out, MIN_OBSERVATION_BYTES);
    expect(Buffer.byteLength(cut.calls[0]!.result.content)).toBeLessThanOrEqual(MIN_OBSERVATION_BYTES);
    expect(cut.calls[0]!.result.content).toContain('characters of this output cut');
    expect(cut.calls[0]!.result.data).toEqual({ big: true });
    expect(cut.text).toBe('hi');
    expect(out.calls[0]!.result.content).toHaveLength(1000);
  });
});

/** English prose, about 4.5 bytes a token for the sim's Mistral tokenizer. */
const PROSE = 'The quick brown fox jumps over the lazy dog near the river bank. ';

/** Each call returns `chars` of prose: two of 6,000 fill more than a 2,048-token context together. */
const dump = definePlugin({
  name: 'dump',
  description: 'Returns a long text',
  parameters: z.object({ chars: z.number().int() }),
  consumes: 'call',
  hooks: { onEnd: ({ chars }) => PROSE.repeat(Math.ceil(chars / PROSE.length)).slice(0, chars) },
});

const CONTEXT = 2048;

describe("a later round whose prompt the request's tool results grew past the context (real simulator)", () => {
  let sim: SimHandle;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({
      profile: E2E_PROFILE,
      maxModelLen: CONTEXT,
      scenarios: [
        {
          name: 'dump',
          rules: [
            {
              when: { explicit: true, lastRole: 'user', lastUser: { regex: 'shorter' } },
              reply: '[TOOL_CALLS][{"name": "dump", "arguments": {"chars": 3800}}, {"name": "dump", "arguments": {"chars": 3800}}]',
            },
            { when: { explicit: true, lastRole: 'user' }, reply: '[TOOL_CALLS][{"name": "dump", "arguments": {"chars": 6000}}, {"name": "dump", "arguments": {"chars": 6000}}]' },
            { when: { explicit: true, lastRole: 'tool' }, reply: 'I read both texts.' },
          ],
        },
      ],
    });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map([['dump', inlineTool(dump)]]) });
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const ask = (content: string) => ({ model: SIM_MODEL, scenario: 'dump', messages: [{ role: 'user', content }] });

  it('cuts the results shorter and sends the round again, rather than refuse a request the client made right', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', ask('Fetch two long texts.'));
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.choices[0].message.content).toBe('I read both texts.');
    expect(res.json.conveyor).toMatchObject({ rounds: 2, stop_reason: 'answer' });
    // Round 2 was refused once, then went out with the results cut: its prompt fits with room for the reply.
    expect(res.json.usage.prompt_tokens).toBeLessThan(2 * CONTEXT);
    // The conversation to continue with holds the results as the model saw them.
    const results = (res.json.conveyor.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.content.length).toBeLessThan(6000);
      expect(r.content).toMatch(/^The quick brown fox[\s\S]*\n\[… [\d,]+ characters of this output cut …\]\n/);
    }
    const timeline = await getJson(gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const fits = events.filter((e) => e.type === 'error');
    expect(fits).toEqual([expect.objectContaining({ round: 2, detail: expect.stringMatching(/did not fit|too little of the context of 2048: this request's tool results were cut to \d+ bytes each/) })]);
    expect(events.filter((e) => e.type === 'round-start').map((e) => e.round)).toEqual([1, 2]);
  });

  it('streams the same answer with no error chunk, the tool results as the tools gave them', async () => {
    const streamed = await streamChat(gateway.url, ask('Fetch two long texts.'));
    expect(streamed.chunks.filter((c) => c.error)).toEqual([]);
    expect(streamed.content).toContain('I read both texts.');
    const results = streamed.events.filter((e) => e.type === 'tool_call.completed');
    expect(results.map((e) => (e.content as string).length)).toEqual([6000, 6000]);
  });

  it("cuts them too when they leave the request's max_tokens almost no room, rather than cut the reply short", async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...ask('Fetch two shorter texts.'), max_tokens: 1000 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.choices[0]).toMatchObject({ message: { content: 'I read both texts.' }, finish_reason: 'stop' });
    const timeline = await getJson(gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const marks = (timeline.json.events as TimelineEvent[]).filter((e) => e.type === 'error').map((e) => e.detail);
    // The prompt fit, but left max_tokens less than a quarter of the context: cut first; then max_tokens is what the context leaves.
    expect(marks).toEqual([expect.stringMatching(/too little of the context of 2048: this request's tool results were cut/), expect.stringMatching(/sent again with \d+$/)]);
  });

  it("still refuses when the client's own messages leave no room the results could free", async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', ask(`Fetch two long texts. ${PROSE.repeat(110)}`));
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect(res.json.error.message).toMatch(/^round 2 of this request/);
  });
});
