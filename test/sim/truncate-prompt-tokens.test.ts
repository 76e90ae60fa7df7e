import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's truncate_prompt_tokens (protocol.py: `Optional[Annotated[int, Field(ge=-1)]]` on both
// request models; v0.11's renderer.py, CompletionRenderer): the prompt keeps its last k tokens
// (`token_ids[-k:]`), -1 means max_model_len, more than max_model_len is refused, and the length
// check reads the truncated prompt.

const CONTEXT = 256;
const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', maxModelLen: CONTEXT, scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

type Answer = { usage: { prompt_tokens: number }; choices: Array<{ prompt_token_ids?: number[] | null }>; prompt_token_ids?: number[] | null };

function completion(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ max_tokens: 2, ...body }) });
}

describe('truncate_prompt_tokens', () => {
  it('keeps the last k tokens of a token prompt: usage and prompt_token_ids count only those', async () => {
    const res = await completion({ prompt: [1, 851, 349, 264, 1369, 28723], truncate_prompt_tokens: 3, return_token_ids: true });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Answer;
    expect(body.usage.prompt_tokens).toBe(3);
    expect(body.choices[0]!.prompt_token_ids).toEqual([264, 1369, 28723]);
  });

  it('keeps the last k tokens of a chat prompt, and leaves a shorter prompt (or -1, or null) whole', async () => {
    const whole = ((await (await postChat(sim.url, { messages, max_tokens: 2 })).json()) as Answer).usage.prompt_tokens;
    expect(whole).toBeGreaterThan(4);
    const cut = (await (await postChat(sim.url, { messages, max_tokens: 2, truncate_prompt_tokens: 4 })).json()) as Answer;
    expect(cut.usage.prompt_tokens).toBe(4);
    for (const truncate_prompt_tokens of [whole, whole + 10, -1, null]) {
      const body = (await (await postChat(sim.url, { messages, max_tokens: 2, truncate_prompt_tokens })).json()) as Answer;
      expect(body.usage.prompt_tokens).toBe(whole);
    }
  });

  it('checks the context against the truncated prompt: a prompt too long for it is served once cut', async () => {
    const long = Array.from({ length: CONTEXT + 40 }, () => 1369);
    expect((await completion({ prompt: long })).status).toBe(400);
    const res = await completion({ prompt: long, truncate_prompt_tokens: 100 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Answer).usage.prompt_tokens).toBe(100);
  });

  it('refuses more than max_model_len in vLLM\'s words, and less than -1 as pydantic does', async () => {
    for (const send of [(extra: object) => postChat(sim.url, { messages, ...extra }), (extra: object) => completion({ prompt: 'say hello', ...extra })]) {
      const tooMany = await send({ truncate_prompt_tokens: CONTEXT + 1 });
      expect(tooMany.status).toBe(400);
      expect(await tooMany.json()).toEqual({
        error: { message: `truncate_prompt_tokens (${CONTEXT + 1}) cannot be greater than max_length (${CONTEXT}). Please select a smaller truncation size.`, type: 'BadRequestError', param: null, code: 400 },
      });
      const negative = await send({ truncate_prompt_tokens: -2 });
      expect(negative.status).toBe(400);
      expect(await negative.json()).toEqual({
        error: {
          message: "1 validation error:\n  {'type': 'greater_than_equal', 'loc': ('body', 'truncate_prompt_tokens'), 'msg': 'Input should be greater than or equal to -1'}",
          type: 'Bad Request',
          param: 'body.truncate_prompt_tokens',
          code: 400,
        },
      });
    }
  });

  it('refuses 0, which leaves no prompt to play', async () => {
    const res = await postChat(sim.url, { messages, truncate_prompt_tokens: 0 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('BadRequestError');
  });
});
