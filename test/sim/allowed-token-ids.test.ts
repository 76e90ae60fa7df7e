import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's input processor (v1/engine/processor.py _validate_sampling_params, v0.10–0.11) refuses an
// empty `allowed_token_ids` and one with an id outside the vocabulary, right after logit_bias' ids;
// the simulator read no allowed_token_ids and answered both with a 200.

const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

const refused = (message: string) => ({ error: { message, type: 'BadRequestError', param: null, code: 400 } });

describe('allowed_token_ids', () => {
  it('refuses an empty list and an id outside the vocabulary, on both routes', async () => {
    const empty = await postChat(sim.url, { messages, allowed_token_ids: [] });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual(refused('allowed_token_ids is not None and empty!'));
    for (const ids of [[1, 32000], [-1]]) {
      const res = await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', allowed_token_ids: ids }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(refused('allowed_token_ids contains out-of-vocab token id!'));
    }
  });

  it('is checked after logit_bias and after SamplingParams\' own checks', async () => {
    const afterBias = await postChat(sim.url, { messages, allowed_token_ids: [], logit_bias: { '40000': 1 } });
    expect(((await afterBias.json()) as { error: { param: string } }).error.param).toBe('logit_bias');
    const afterRanges = await postChat(sim.url, { messages, allowed_token_ids: [], top_p: 0 });
    expect(((await afterRanges.json()) as { error: { param: string } }).error.param).toBe('top_p');
  });

  it('takes ids inside the vocabulary (not applied: the reply is scripted), and null', async () => {
    for (const allowed_token_ids of [[0, 31999], null]) expect((await postChat(sim.url, { messages, allowed_token_ids, max_tokens: 2 })).status).toBe(200);
  });

  it('refuses what is no list of integers as pydantic does', async () => {
    const res = await postChat(sim.url, { messages, allowed_token_ids: ['a'] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('body.allowed_token_ids.0');
  });
});
