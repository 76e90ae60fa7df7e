import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { FAST_DECODE_PROFILE, LONG_MODEL_NAME, startSlowReader, type SlowReader } from '../support/slow-reader.ts';
import { allSseData, postChat } from './sim-test-helpers.ts';

const TOKENS = 3_000;
const MODEL = LONG_MODEL_NAME;

describe('a streamed answer to a client that reads slower than the engine decodes', () => {
  let sim: SimHandle;
  let client: SlowReader | undefined;
  beforeAll(async () => {
    sim = await startSim({ modelName: MODEL, profile: FAST_DECODE_PROFILE });
  });
  afterAll(async () => {
    client?.kill();
    await sim?.close();
  });

  it("keeps decoding and merges the tokens made while the socket was full into later chunks, as vLLM's output collector does", async () => {
    const request = { model: MODEL, messages: [{ role: 'user', content: 'Say something long.' }], stream: true, stream_options: { include_usage: true }, max_tokens: TOKENS, ignore_eos: true };
    client = await startSlowReader(sim.url, '/v1/chat/completions', request);
    // The engine is not held up by the reader: the whole sequence is decoded while it reads nothing.
    await eventually(() => sim.counters().tokensGenerated >= TOKENS && sim.counters().running === 0, 'the sequence has finished', 30_000);

    const data = (await client.readRest()).chunks.join('').split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    const deltas = chunks.filter((c) => c.choices.length === 1 && c.choices[0].delta.content !== undefined && c.choices[0].delta.role === undefined);
    // Fewer chunks than tokens: some carry several tokens' text.
    expect(deltas.length).toBeLessThan(TOKENS);
    expect(deltas.at(-1).choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1).usage.completion_tokens).toBe(TOKENS);
    // The same text as a reader that keeps up, token by token.
    const reference = (await allSseData(await postChat(sim.url, request))).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));
    const text = (cs: Array<{ choices: Array<{ delta: { content?: string } }> }>) => cs.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(reference.filter((c) => c.choices.length === 1 && c.choices[0].delta.role === undefined)).toHaveLength(TOKENS);
    expect(text(deltas)).toBe(text(reference));
  }, 60_000);
});
