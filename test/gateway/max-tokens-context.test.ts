import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

/** The sim's context: small, so a request that fills it stays small too. */
const CONTEXT = 2048;

/** Round 1 calls the calculator, round 2 quotes its result (sim/scenarios/calculator.json). */
const CALCULATOR = { model: SIM_MODEL, scenario: 'calculator', messages: [{ role: 'user', content: 'What is 200*701?' }] };

interface Completion {
  choices: Array<{ message: { content: string | null }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number };
  conveyor: { rounds: number; stop_reason: string };
  error?: { message: string; type: string; param: string | null; code: string };
}

describe('a max_tokens that fills the context, over tool rounds (real simulator)', () => {
  let conveyor: ConveyorHandle;
  /** Round 1's prompt: the client's own messages and tools as the sim counts them. */
  let clientPrompt: number;

  beforeAll(async () => {
    conveyor = await startTestConveyor({ sim: { maxModelLen: CONTEXT }, plugins: { python: false } });
    // max_tokens 1 cuts round 1 at its first token: its usage is the client prompt's size alone.
    const probe = (await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...CALCULATOR, max_tokens: 1 })).json as Completion;
    clientPrompt = probe.usage.prompt_tokens;
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('answers a request whose max_tokens is exactly what its prompt leaves, though the tool result grew the prompt of round 2', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...CALCULATOR, max_tokens: CONTEXT - clientPrompt });
    const body = res.json as Completion;
    expect(res.status, JSON.stringify(body.error)).toBe(200);
    expect(body.conveyor).toMatchObject({ rounds: 2, stop_reason: 'answer' });
    expect(body.choices[0]!.message.content).toContain('140200');
    expect(body.choices[0]!.finish_reason).toBe('stop');
  });

  it('streams it too', async () => {
    const streamed = await streamChat(conveyor.gateway.url, { ...CALCULATOR, max_completion_tokens: CONTEXT - clientPrompt });
    const errors = streamed.chunks.filter((c) => c.error);
    expect(errors, JSON.stringify(errors)).toEqual([]);
    expect(streamed.content).toContain('140200');
    expect(streamed.chunks.flatMap((c) => c.choices).at(-1)?.finish_reason).toBe('stop');
    expect(streamed.done).toBe(true);
  });

  it("refuses a round-1 max_tokens the client's own prompt leaves no room for, in vLLM's words, as a bad max_tokens and not a context overflow", async () => {
    const tooMany = CONTEXT - clientPrompt + 1;
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...CALCULATOR, max_tokens: tooMany });
    expect(res.status).toBe(400);
    expect((res.json as Completion).error).toEqual({
      message: `'max_tokens' or 'max_completion_tokens' is too large: ${tooMany}. This model's maximum context length is ${CONTEXT} tokens and your request has ${clientPrompt} input tokens (${tooMany} > ${CONTEXT} - ${clientPrompt}).`,
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'upstream_response_error',
    });
  });

  it('answers a prompt longer than the context with code context_length_exceeded on messages', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...CALCULATOR, messages: [{ role: 'user', content: 'What is 200*701? '.repeat(CONTEXT / 4) }] });
    expect(res.status).toBe(400);
    expect((res.json as Completion).error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' });
    expect((res.json as Completion).error!.message).toMatch(new RegExp(`^This model's maximum context length is ${CONTEXT} tokens. However, your request has \\d+ input tokens.`));
  });
});
