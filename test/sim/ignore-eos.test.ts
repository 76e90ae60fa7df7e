import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { FILLER_TEXT } from '../../sim/reply-continuation.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario, postChat, streamedText } from './sim-test-helpers.ts';

// Benchmark clients send ignore_eos to get outputs of a fixed length: vLLM then generates until
// max_tokens, finish_reason "length". The simulator's scripted reply ends early, so it keeps
// writing FILLER_TEXT (whose tokens split on word pieces: " The", " quick", " brown", " f", "ox", …).

const REPLY = 'Hello world! \u{1F9EC} done.';
const R = encodeText(REPLY).length;
const F = encodeText(FILLER_TEXT).length;
const MODEL = 'mistral-7b-instruct-sim';
const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', REPLY)] });
});
afterAll(() => sim.close());

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

function postCompletion(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'say hello', ...body }) });
}

async function streamedChunks(res: Response): Promise<Array<{ choices: Array<Record<string, unknown>>; usage?: Usage | null }>> {
  const payloads = await allSseData(res);
  expect(payloads.at(-1)).toBe('[DONE]');
  return payloads.slice(0, -1).map((p) => JSON.parse(p));
}

describe('ignore_eos', () => {
  it('streams a chat past the reply until max_tokens, one chunk per token, finish_reason length', async () => {
    const max_tokens = R + 2 * F;
    const res = await postChat(sim.url, { model: MODEL, messages, stream: true, max_tokens, ignore_eos: true, stream_options: { include_usage: true } });
    const chunks = await streamedChunks(res);
    const tokenChunks = chunks.slice(1, -1); // after the role chunk, before the usage chunk
    expect(tokenChunks).toHaveLength(max_tokens);
    expect(streamedText(chunks.map((c) => JSON.stringify(c)))).toBe(REPLY + FILLER_TEXT + FILLER_TEXT);
    expect(tokenChunks.slice(0, -1).every((c) => c.choices[0]!['finish_reason'] === null)).toBe(true);
    expect(tokenChunks.at(-1)!.choices[0]).toMatchObject({ finish_reason: 'length', stop_reason: null });
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(max_tokens);
  });

  it('answers a non-streamed chat and both /v1/completions forms the same way', async () => {
    const max_tokens = R + F;
    const whole = await (await postChat(sim.url, { model: MODEL, messages, max_tokens, ignore_eos: true })).json();
    expect(whole.choices[0]).toMatchObject({ message: { content: REPLY + FILLER_TEXT }, finish_reason: 'length' });
    expect(whole.usage.completion_tokens).toBe(max_tokens);

    const text = await (await postCompletion({ max_tokens, ignore_eos: true })).json();
    expect(text.choices[0]).toMatchObject({ text: REPLY + FILLER_TEXT, finish_reason: 'length', stop_reason: null });
    expect(text.usage.completion_tokens).toBe(max_tokens);

    const chunks = await streamedChunks(await postCompletion({ max_tokens, ignore_eos: true, stream: true, stream_options: { include_usage: true } }));
    const tokenChunks = chunks.slice(0, -1);
    expect(tokenChunks).toHaveLength(max_tokens);
    expect(tokenChunks.map((c) => c.choices[0]!['text']).join('')).toBe(REPLY + FILLER_TEXT);
    expect(tokenChunks.at(-1)!.choices[0]).toMatchObject({ finish_reason: 'length' });
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(max_tokens);
  });

  it('still ends at a stop string, in the filler too', async () => {
    const body = await (await postChat(sim.url, { model: MODEL, messages, max_tokens: R + 3 * F, ignore_eos: true, stop: ['lazy'] })).json();
    expect(body.choices[0]).toMatchObject({ message: { content: `${REPLY} The quick brown fox jumps over the ` }, finish_reason: 'stop', stop_reason: 'lazy' });
  });

  it('costs one engine step per filler token, like any other token', async () => {
    const before = sim.counters();
    const max_tokens = R + 30;
    const body = await (await postChat(sim.url, { model: MODEL, messages, max_tokens, ignore_eos: true })).json();
    expect(body.usage.completion_tokens).toBe(max_tokens);
    const after = sim.counters();
    expect(after.tokensGenerated - before.tokensGenerated).toBe(max_tokens);
    // Alone in the engine: the prefill step yields the first token, then one decode step per token.
    expect(after.steps - before.steps).toBe(max_tokens);
    expect(after.finishedLength - before.finishedLength).toBe(1);
    expect(after.busyMs - before.busyMs).toBeGreaterThanOrEqual(max_tokens * 4); // fast-test: decode.baseMs 4
  });
});

describe('min_tokens', () => {
  it('does not stop before min_tokens: the reply, filler up to min_tokens, then EOS', async () => {
    // Five filler tokens: " The", " quick", " brown", " f", "ox".
    const body = await (await postChat(sim.url, { model: MODEL, messages, min_tokens: R + 5 })).json();
    expect(body.choices[0]).toMatchObject({ message: { content: `${REPLY} The quick brown fox` }, finish_reason: 'stop', stop_reason: null });
    expect(body.usage.completion_tokens).toBe(R + 5 + 1);

    const chunks = await streamedChunks(await postCompletion({ max_tokens: 100, min_tokens: R + 5, stream: true, stream_options: { include_usage: true } }));
    expect(chunks.slice(0, -1).map((c) => c.choices[0]!['text']).join('')).toBe(`${REPLY} The quick brown fox`);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(R + 5 + 1);
  });

  it('changes nothing for a reply at least that long, and ends with length when min_tokens is max_tokens', async () => {
    const short = await (await postChat(sim.url, { model: MODEL, messages, min_tokens: R })).json();
    expect(short.choices[0]).toMatchObject({ message: { content: REPLY }, finish_reason: 'stop' });
    expect(short.usage.completion_tokens).toBe(R + 1);
    const exact = await (await postChat(sim.url, { model: MODEL, messages, min_tokens: R + 2, max_tokens: R + 2 })).json();
    expect(exact.choices[0]).toMatchObject({ message: { content: `${REPLY} The quick` }, finish_reason: 'length' });
  });

  it('ignores stop strings and stop tokens the first min_tokens tokens complete, as vLLM does', async () => {
    const ids = encodeText(REPLY);
    // "world" is complete at the second token; its stop token is the second token itself.
    const body = await (await postChat(sim.url, { model: MODEL, messages, min_tokens: 3, stop: ['world'], stop_token_ids: [ids[1]] })).json();
    expect(body.choices[0]).toMatchObject({ message: { content: REPLY }, finish_reason: 'stop', stop_reason: null });
    // Past min_tokens a stop string still ends the sequence.
    const later = await (await postChat(sim.url, { model: MODEL, messages, min_tokens: 1, stop: ['world'] })).json();
    expect(later.choices[0]).toMatchObject({ message: { content: 'Hello ' }, stop_reason: 'world' });
  });
});
