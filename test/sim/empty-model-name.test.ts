import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's OpenAIServing._is_model_supported starts `if not model_name: return True`, and
// _get_model_name answers the served name for a falsy one (serving_engine.py, v0.8-0.11): an empty
// `model`, as some clients send when none is configured, is the served model, not a 404.

const SERVED = 'served-sim';
let sim: SimHandle;
let origin: string;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', modelName: SERVED, scenarios: [fixedReplyScenario('hi', 'Hello there.')] });
  origin = sim.url.replace(/\/v1$/, '');
});
afterAll(() => sim.close());

const messages = [{ role: 'user', content: 'hi' }];

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('model ""', () => {
  it('is the served model on /v1/chat/completions, and the response names the served model', async () => {
    const res = await postChat(sim.url, { model: '', messages, max_tokens: 2 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe(SERVED);
  });

  it('names the served model on every streamed chunk', async () => {
    const res = await postChat(sim.url, { model: '', messages, max_tokens: 2, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as { model: string });
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set([SERVED]));
  });

  it('is the served model on /v1/completions and /tokenize', async () => {
    const completion = await post('/v1/completions', { model: '', prompt: 'hi', max_tokens: 2 });
    expect(completion.status).toBe(200);
    expect(((await completion.json()) as { model: string }).model).toBe(SERVED);
    expect((await post('/tokenize', { model: '', prompt: 'hi' })).status).toBe(200);
  });

  it('still leaves an unknown non-empty name a 404', async () => {
    expect((await postChat(sim.url, { model: 'other', messages })).status).toBe(404);
  });
});
