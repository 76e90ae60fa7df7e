import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's input processor refuses logit_bias keys outside the vocabulary (v1/engine/processor.py
// _validate_logit_bias, v0.10–0.11; SamplingParams._validate_logit_bias later, with
// parameter="logit_bias"): every bad id in the request's order, then the model's vocabulary size.
// Mistral-7B's vocabulary is 32,000 tokens, so ids 0–31999 are in it.

const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

const refused = (ids: string) => ({
  error: { message: `token_id(s) ${ids} in logit_bias contain out-of-vocab token ids. Vocabulary size: 32000`, type: 'BadRequestError', param: 'logit_bias', code: 400 },
});

describe('logit_bias token ids', () => {
  it('refuses ids past the vocabulary and negative ones, listing each', async () => {
    const res = await postChat(sim.url, { messages, logit_bias: { '5': 1, '32000': 2, '99999': 0, '-1': -3 } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(refused('[32000, 99999, -1]'));
  });

  it('refuses them on /v1/completions too, streamed or not', async () => {
    for (const stream of [false, true]) {
      const res = await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', stream, logit_bias: { '40000': 5 } }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(refused('[40000]'));
    }
  });

  it('refuses a key that is not an integer in Python\'s words (v0.11\'s int())', async () => {
    const res = await postChat(sim.url, { messages, logit_bias: { abc: 1 } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: "invalid literal for int() with base 10: 'abc'", type: 'BadRequestError', param: 'logit_bias', code: 400 } });
  });

  // v0.11's SamplingParams.from_optional turns the keys into ints before it builds SamplingParams,
  // whose __post_init__ then checks the ranges: a bad key is reported before a bad temperature.
  it('reports a key int() cannot read before the sampling fields\' ranges', async () => {
    const res = await postChat(sim.url, { messages, temperature: -1, top_p: 5, logit_bias: { abc: 1 } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: "invalid literal for int() with base 10: 'abc'", type: 'BadRequestError', param: 'logit_bias', code: 400 } });
  });

  // The vocabulary is checked later, by the engine's input processor, once SamplingParams stands.
  it('reports an id past the vocabulary after the sampling fields\' ranges', async () => {
    const res = await postChat(sim.url, { messages, temperature: -1, logit_bias: { '40000': 1 } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('temperature must be non-negative, got -1.0.');
  });

  // Review: the simulator listed the bad ids in JavaScript's key order (JSON.parse puts integer keys
  // first, ascending: "[32000, 40000, -1]" here) and a repeated id ("32000", "032000") twice; vLLM's
  // dict lists them in the request's order, each once. The bodies are written by hand: JSON.stringify
  // of an object would send them in JavaScript's order too.
  it('lists the bad ids in the order the request sent them, each once, as vLLM\'s dict has them', async () => {
    const cases: Array<[string, string]> = [
      ['{"-1": 0, "40000": 1, "5": 0, "32000": 2}', '[-1, 40000, 32000]'],
      ['{"32001": 0, "32000": 0}', '[32001, 32000]'],
      ['{"32000": 1, " 7": 0, "032000": 2, "-2": 1, "-2": 3}', '[32000, -2]'],
    ];
    for (const [logitBias, ids] of cases) {
      for (const route of ['chat/completions', 'completions']) {
        // Strings with quotes and brackets before the map: the scan that reads its order skips them whole.
        const tricky = 'say hello "}{[" \\';
        const prompt = route === 'completions' ? `"prompt": ${JSON.stringify(tricky)}` : `"messages": ${JSON.stringify([{ role: 'user', content: tricky }])}`;
        const body = `{${prompt}, "logit_bias": ${logitBias}, "messages_after": {"logit_bias": {"1": 0}}}`;
        const res = await fetch(`${sim.url}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual(refused(ids));
      }
    }
  });

  it('takes ids inside the vocabulary, the last one included, and an empty map', async () => {
    for (const logit_bias of [{ '0': 100, '31999': -100 }, {}, null]) {
      expect((await postChat(sim.url, { messages, logit_bias, max_tokens: 2 })).status).toBe(200);
    }
  });
});
