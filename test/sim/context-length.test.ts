import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { upstreamResponseError } from '../../llm-client/upstream-response-error.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

const CONTEXT = 256;
const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;
/** The prompt of `messages`, in the sim's tokens. */
let promptTokens: number;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', maxModelLen: CONTEXT, scenarios: [fixedReplyScenario('hello', 'Hello!')] });
  const probe = (await (await postChat(sim.url, { messages, max_tokens: 1 })).json()) as { usage: { prompt_tokens: number } };
  promptTokens = probe.usage.prompt_tokens;
});
afterAll(() => sim.close());

async function errorOf(res: Response) {
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as { error: { message: string; type: string; param: string | null; code: number } } };
}

// The gateway reads these messages (llm-client/upstream-response-error.ts): a later round of a tool
// request is sent again with what the context leaves, and a prompt that does not fit gets
// OpenAI's context_length_exceeded. They are vLLM's (serving_engine.py, >= 0.9) word for word.
describe("the simulator's context checks, in vLLM's words", () => {
  it('takes a max_tokens of exactly what the prompt leaves', async () => {
    const res = await postChat(sim.url, { messages, max_tokens: CONTEXT - promptTokens });
    expect(res.status).toBe(200);
  });

  it('refuses one token more, naming the context and the prompt', async () => {
    const requested = CONTEXT - promptTokens + 1;
    const { status, text, body } = await errorOf(await postChat(sim.url, { messages, max_completion_tokens: requested }));
    expect(status).toBe(400);
    expect(body).toEqual({
      error: {
        message: `'max_tokens' or 'max_completion_tokens' is too large: ${requested}. This model's maximum context length is ${CONTEXT} tokens and your request has ${promptTokens} input tokens (${requested} > ${CONTEXT} - ${promptTokens}).`,
        type: 'BadRequestError',
        param: 'max_tokens',
        code: 400,
      },
    });
    expect(upstreamResponseError(status, [Buffer.from(text)])).toMatchObject({ code: 'upstream_response_error', tokensThatFit: CONTEXT - promptTokens });
  });

  it('refuses a prompt that alone fills the context, whatever max_tokens is', async () => {
    const long = [{ role: 'user', content: 'say hello '.repeat(CONTEXT) }];
    const { status, text, body } = await errorOf(await postChat(sim.url, { messages: long, max_tokens: 1 }));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: 'BadRequestError', param: 'messages', code: 400 });
    expect(body.error.message).toMatch(new RegExp(`^This model's maximum context length is ${CONTEXT} tokens\\. However, your request has \\d+ input tokens\\. Please reduce the length of the input messages\\.$`));
    expect(upstreamResponseError(status, [Buffer.from(text)])).toMatchObject({ code: 'context_length_exceeded', param: 'messages', maxModelLen: CONTEXT });
  });
});
