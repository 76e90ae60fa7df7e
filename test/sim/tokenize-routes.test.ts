import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOS_TOKEN_ID, encodeText, VOCAB_SIZE } from '../../sim/mistral-tokenizer.ts';
import { SIM_VLLM_VERSION } from '../../sim/server-routes.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's utility routes beside the OpenAI API: /tokenize, /detokenize (serving_tokenization.py),
// /version, and /ping (the SageMaker alias of /health).

let sim: SimHandle;
let origin: string;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', maxModelLen: 4096, scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
  origin = sim.url.replace(/\/v1$/, '');
});
afterAll(() => sim.close());

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('POST /tokenize', () => {
  it('tokenizes a text prompt with BOS first by default, in TokenizeResponse\'s shape and key order', async () => {
    const res = await post('/tokenize', { prompt: 'Hello world' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    const tokens = [BOS_TOKEN_ID, ...encodeText(' Hello world')];
    expect(body).toEqual({ count: tokens.length, max_model_len: 4096, tokens, token_strs: null });
    expect(Object.keys(body)).toEqual(['count', 'max_model_len', 'tokens', 'token_strs']);
  });

  it('leaves BOS out with add_special_tokens: false, and names the pieces with return_token_strs', async () => {
    const bare = (await (await post('/tokenize', { prompt: 'Hello world', add_special_tokens: false })).json()) as { tokens: number[] };
    expect(bare.tokens).toEqual(encodeText(' Hello world'));
    const named = (await (await post('/tokenize', { prompt: 'Hello world', return_token_strs: true })).json()) as { token_strs: string[] };
    expect(named.token_strs).toEqual(['<s>', '▁Hello', '▁world']);
  });

  // The ids vLLM gives with Mistral-7B's tokenizer (SentencePiece's added leading space): the
  // simulator gave [1, 2249, 322, …] ("Pl", "ot"), a token more in prompt_tokens.
  it('adds the leading space SentencePiece adds, so a text prompt has the ids vLLM gives it', async () => {
    const ids = async (prompt: string) => ((await (await post('/tokenize', { prompt })).json()) as { tokens: number[] }).tokens;
    expect(await ids('Plot a sine wave')).toEqual([BOS_TOKEN_ID, 27171, 264, 268, 473, 8333]);
    expect(await ids('hello world')).toEqual([BOS_TOKEN_ID, 6312, 28709, 1526]);
    expect(await ids('')).toEqual([BOS_TOKEN_ID]);
    const completion = (await (await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Plot a sine wave', max_tokens: 1 }) })).json()) as { usage: { prompt_tokens: number } };
    expect(completion.usage.prompt_tokens).toBe(6);
  });

  it('counts messages exactly as a chat completion counts its prompt_tokens', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'say hello' },
    ];
    const tokenized = (await (await post('/tokenize', { model: 'mistral-7b-instruct-sim', messages })).json()) as { count: number; tokens: number[] };
    const completion = (await (await postChat(sim.url, { messages, max_tokens: 1 })).json()) as { usage: { prompt_tokens: number } };
    expect(tokenized.count).toBe(completion.usage.prompt_tokens);
    expect(tokenized.tokens[0]).toBe(BOS_TOKEN_ID);
  });

  it("prefills a request's tools before its last user turn, as Mistral's template puts them, and counts them the same on both routes", async () => {
    const tools = [{ type: 'function', function: { name: 'calculator', description: 'Evaluates arithmetic.', parameters: { type: 'object', properties: { expression: { type: 'string' } } } } }];
    const messages = [
      { role: 'user', content: 'say hello' },
      { role: 'assistant', content: 'Hello world!' },
      { role: 'user', content: 'say hello' },
    ];
    const count = async (body: Record<string, unknown>) => ((await (await post('/tokenize', { messages, ...body })).json()) as { count: number; tokens: number[] });
    const without = await count({});
    const withTools = await count({ tools });
    const block = encodeText(`[AVAILABLE_TOOLS] ${JSON.stringify(tools)}[/AVAILABLE_TOOLS]`);
    expect(withTools.count).toBe(without.count + block.length);
    // Before the last [INST], after the turns before it: those stay a shared prefix with a request without tools.
    const lastInst = without.tokens.lastIndexOf(encodeText('[INST] ')[0]!);
    expect(withTools.tokens.slice(0, lastInst)).toEqual(without.tokens.slice(0, lastInst));
    expect(withTools.tokens.slice(lastInst, lastInst + block.length)).toEqual(block);
    const completion = (await (await postChat(sim.url, { messages, tools, max_tokens: 1 })).json()) as { usage: { prompt_tokens: number } };
    expect(completion.usage.prompt_tokens).toBe(withTools.count);
  });

  it('answers an unknown model with 404 and a body with neither prompt nor messages with 400', async () => {
    expect((await post('/tokenize', { model: 'nope', prompt: 'x' })).status).toBe(404);
    expect((await post('/tokenize', { model: 'sim-hello', prompt: 'x' })).status).toBe(200);
    const res = await post('/tokenize', { model: 'mistral-7b-instruct-sim' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('Bad Request');
  });
});

describe('POST /detokenize', () => {
  it('turns token ids back into the text they were made from', async () => {
    const text = 'Plot a sine wave \u{1F9EC} please';
    const res = await post('/detokenize', { tokens: encodeText(text) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ prompt: text });
  });

  it('refuses an id past the vocabulary with 400, in vLLM\'s words', async () => {
    const res = await post('/detokenize', { tokens: [BOS_TOKEN_ID, VOCAB_SIZE + 5] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: `Token id ${VOCAB_SIZE + 5} is out of vocabulary`, type: 'BadRequestError', param: 'tokens', code: 400 } });
    expect((await post('/detokenize', { model: 'nope', tokens: [1] })).status).toBe(404);
  });
});

describe('GET /version and /ping', () => {
  it('reports the vLLM version whose API the simulator follows', async () => {
    const res = await fetch(`${origin}/version`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: SIM_VLLM_VERSION });
    expect(SIM_VLLM_VERSION).toMatch(/^0\.\d+\.\d+$/);
  });

  it('answers /ping with an empty 200 to GET and to POST, as /health', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${origin}/ping`, { method });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    }
  });
});
