import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOS_TOKEN_ID, encodeText, EOS_TOKEN_ID } from '../../sim/mistral-tokenizer.ts';
import { decodeClientTokenIds, textPromptTokenIds } from '../../sim/prompt-tokens.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario } from './sim-test-helpers.ts';

// The emoji U+1F9EC is spelled with four byte-fallback tokens: three of them carry "".
const REPLY = 'Hello world! \u{1F9EC} done.';
const MODEL = 'mistral-7b-instruct-sim';

let sim: SimHandle;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', REPLY)] });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
});
afterAll(() => sim.close());

function postCompletion(body: unknown): Promise<Response> {
  return fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

interface TextChunk {
  id: string;
  object: string;
  choices: Array<{ index: number; text: string; logprobs: null; finish_reason: string | null; stop_reason: string | null }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

describe('POST /v1/completions (vLLM legacy text completions)', () => {
  it('streams one text_completion chunk per token, no role chunk, then usage and [DONE]', async () => {
    const res = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 200, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const payloads = await allSseData(res);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as TextChunk);
    const usageChunk = chunks.at(-1)!;
    const tokenChunks = chunks.slice(0, -1);

    expect(tokenChunks[0]!.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(tokenChunks).toHaveLength(encodeText(REPLY).length + 1); // + EOS
    for (const c of tokenChunks) {
      expect(c).toMatchObject({ id: tokenChunks[0]!.id, object: 'text_completion', model: MODEL, usage: null });
      // vLLM 0.10.2 on (return_token_ids): the token-id fields, null unless asked for, dumped with every chunk.
      expect(c.choices[0]).toMatchObject({ prompt_token_ids: null, token_ids: null });
      expect(Object.keys(c.choices[0]!)).toEqual(['index', 'text', 'logprobs', 'finish_reason', 'stop_reason', 'prompt_token_ids', 'token_ids']);
    }
    expect(tokenChunks.map((c) => c.choices[0]!.text).join('')).toBe(REPLY);
    expect(tokenChunks.at(-1)!.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: null });
    const promptTokens = 1 + encodeText('say hello').length;
    expect(usageChunk).toMatchObject({ choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: tokenChunks.length } });
  });

  it("sends the whole response's choice with every field of vLLM's CompletionResponseChoice, in its order", async () => {
    const body = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 2 })).json()) as { choices: Array<Record<string, unknown>> };
    expect(Object.keys(body)).toEqual(['id', 'object', 'created', 'model', 'choices', 'service_tier', 'system_fingerprint', 'usage', 'kv_transfer_params']);
    expect(body.choices[0]).toEqual({
      index: 0,
      text: expect.any(String),
      logprobs: null,
      finish_reason: 'length',
      stop_reason: null,
      token_ids: null,
      prompt_logprobs: null,
      prompt_token_ids: null,
    });
    expect(Object.keys(body.choices[0]!)).toEqual(['index', 'text', 'logprobs', 'finish_reason', 'stop_reason', 'token_ids', 'prompt_logprobs', 'prompt_token_ids']);
  });

  it('dumps a running usage whole with continuous_usage_stats (prompt_tokens_details: null), the final one without it', async () => {
    const res = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 2, stream: true, stream_options: { continuous_usage_stats: true } });
    const payloads = (await allSseData(res)).slice(0, -1);
    const promptTokens = 1 + encodeText('say hello').length;
    expect(payloads.map((p) => JSON.stringify((JSON.parse(p) as TextChunk).usage))).toEqual([
      `{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + 1},"completion_tokens":1,"prompt_tokens_details":null}`,
      `{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + 2},"completion_tokens":2,"prompt_tokens_details":null}`,
      `{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens + 2},"completion_tokens":2}`,
    ]);
  });

  it('returns the prompt and generated token ids with return_token_ids (EOS included), the prompt ids on the first streamed chunk only', async () => {
    const promptIds = textPromptTokenIds('say hello');
    const generated = [...encodeText(REPLY), EOS_TOKEN_ID];
    const whole = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 100, return_token_ids: true })).json()) as {
      choices: Array<{ text: string; token_ids: number[]; prompt_token_ids: number[] }>;
      usage: { completion_tokens: number };
    };
    expect(whole.choices[0]).toMatchObject({ text: REPLY, prompt_token_ids: promptIds, token_ids: generated });
    expect(whole.usage.completion_tokens).toBe(generated.length);

    const res = await postCompletion({ model: MODEL, prompt: promptIds, max_tokens: 100, stream: true, return_token_ids: true });
    const chunks = (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as { choices: Array<{ token_ids: number[]; prompt_token_ids: number[] | null }> });
    expect(chunks.map((c) => c.choices[0]!.prompt_token_ids)).toEqual([promptIds, ...chunks.slice(1).map(() => null)]);
    expect(chunks.flatMap((c) => c.choices[0]!.token_ids)).toEqual(generated);
    // A stop string cuts the text, not the ids: the token that completed it is generated, and counted.
    const stopped = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 100, stop: ['world'], return_token_ids: true })).json()) as typeof whole;
    expect(stopped.choices[0]!.text).toBe('Hello ');
    expect(stopped.choices[0]!.token_ids).toEqual(encodeText('Hello world'));
    expect(stopped.usage.completion_tokens).toBe(stopped.choices[0]!.token_ids.length);
  });

  // vLLM's serving_completion.py (0.10.2 on): `if request.return_token_ids: prompt_text = ""` before
  // echoing, streamed or not: the prompt comes back as its ids in prompt_token_ids, not as text.
  it('with echo and return_token_ids, echoes no prompt text, as vLLM does: the prompt is in prompt_token_ids', async () => {
    const promptIds = textPromptTokenIds('say hello');
    const whole = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 100, echo: true, return_token_ids: true })).json()) as TextChunk;
    expect(whole.choices[0]).toMatchObject({ text: REPLY, prompt_token_ids: promptIds });
    const res = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 100, echo: true, return_token_ids: true, stream: true });
    const chunks = (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as TextChunk);
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe(REPLY);
    const echoOnly = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 0, echo: true, return_token_ids: true })).json()) as TextChunk;
    expect(echoOnly.choices[0]).toMatchObject({ text: '', prompt_token_ids: promptIds });
  });

  it('defaults max_tokens to 16 as vLLM does, and ends with finish_reason "length"', async () => {
    // `scenario` is the simulator's extension; the client sends unknown fields as they are.
    const long = await client.completions.create({ model: MODEL, prompt: 'x', scenario: 'sine-wave' } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(long.object).toBe('text_completion');
    expect(long.choices[0]!.finish_reason).toBe('length');
    expect(long.usage!.completion_tokens).toBe(16);
    // An explicit null is not the default: the whole reply, up to what the context leaves.
    const whole = await client.completions.create({ model: MODEL, prompt: 'x', scenario: 'sine-wave', max_tokens: null } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(whole.choices[0]!.finish_reason).toBe('stop');
    expect(whole.usage!.completion_tokens).toBeGreaterThan(16);
  });

  it('serves the official openai client, streamed and not, with the same text', async () => {
    const whole = await client.completions.create({ model: MODEL, prompt: 'say hello', max_tokens: 100 });
    expect(whole.choices[0]).toMatchObject({ index: 0, text: REPLY, finish_reason: 'stop' });
    expect(whole.id).toMatch(/^cmpl-/);

    const stream = await client.completions.create({ model: MODEL, prompt: 'say hello', max_tokens: 100, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe(REPLY);
  });

  it('takes a prompt as token ids, and cuts at a stop string with stop_reason', async () => {
    const ids = [BOS_TOKEN_ID, ...encodeText('say hello')];
    const res = await postCompletion({ model: MODEL, prompt: ids, max_tokens: 100, stop: ['world'] });
    const body = (await res.json()) as TextChunk;
    expect(body.choices[0]).toMatchObject({ text: 'Hello ', finish_reason: 'stop', stop_reason: 'world' });
    expect(body.usage!.prompt_tokens).toBe(ids.length);
  });

  it('with echo, starts the text with the prompt (on the first chunk of a stream); the usage is unchanged', async () => {
    const plain = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 3 })).json()) as TextChunk;
    const echoed = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 3, echo: true })).json()) as TextChunk;
    expect(echoed.choices[0]!.text).toBe(`say hello${plain.choices[0]!.text}`);
    expect(echoed.usage).toEqual(plain.usage);

    const res = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 3, echo: 'true', stream: true });
    const chunks = (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as TextChunk);
    expect(chunks).toHaveLength(3);
    expect(chunks[0]!.choices[0]!.text.startsWith('say hello')).toBe(true);
    expect(chunks[1]!.choices[0]!.text.startsWith('say hello')).toBe(false);
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe(`say hello${plain.choices[0]!.text}`);

    // Token ids echo as their text.
    const prompt = [BOS_TOKEN_ID, ...encodeText('say hello')];
    const ids = (await (await postCompletion({ model: MODEL, prompt, max_tokens: 1, echo: true })).json()) as TextChunk;
    expect(ids.choices[0]!.text).toMatch(/say hello./);
    expect(ids.choices[0]!.text.startsWith(decodeClientTokenIds(prompt, 'prompt'))).toBe(true);
  });

  // vLLM's echo_without_generation (protocol.py CompletionRequest.to_sampling_params,
  // serving_completion.py): max_tokens 0 with echo samples one token, counted but not shown.
  it('with echo and max_tokens 0, answers the prompt alone, as vLLM does (one token generated and counted)', async () => {
    const whole = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 0, echo: true });
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as TextChunk;
    expect(body.choices[0]).toMatchObject({ text: 'say hello', finish_reason: 'length', stop_reason: null });
    expect(body.usage).toMatchObject({ completion_tokens: 1 });

    const res = await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 0, echo: true, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as TextChunk);
    expect(chunks.map((c) => c.choices[0]?.text)).toEqual(['say hello', undefined]);
    expect(chunks[0]!.choices[0]!.finish_reason).toBe('length');
    expect(chunks[1]!.usage).toMatchObject({ completion_tokens: 1 });

    // Without echo, max_tokens 0 is still SamplingParams' 400.
    expect((await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 0 })).status).toBe(400);
  });

  it("refuses what it cannot do in vLLM's validation words", async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: MODEL, prompt: ['a', 'b'] }, 'prompt'],
      [{ model: MODEL, prompt: 'a', logprobs: 0 }, 'logprobs'],
      [{ model: MODEL, prompt: 'a', prompt_logprobs: 1 }, 'prompt_logprobs'],
    ];
    for (const [body, param] of cases) {
      const res = await postCompletion(body);
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: { message: string; param: string } }).error;
      expect(error.param).toBe(`body.${param}`);
    }
    // vLLM's validate_stream_options is a model validator: its param names the field, not a body location.
    const streamOptions = await postCompletion({ model: MODEL, prompt: 'a', stream_options: { include_usage: true } });
    expect(streamOptions.status).toBe(400);
    expect(((await streamOptions.json()) as { error: { param: string } }).error.param).toBe('stream_options');
    const outOfVocabulary = await postCompletion({ model: MODEL, prompt: [BOS_TOKEN_ID, 99_999_999], max_tokens: 1 });
    expect(outOfVocabulary.status).toBe(400);
    expect(((await outOfVocabulary.json()) as { error: { message: string } }).error.message).toBe('Token id 99999999 is out of vocabulary');
    const unknownModel = await postCompletion({ model: 'nope', prompt: 'a' });
    expect(unknownModel.status).toBe(404);
  });

  it('refuses a suffix as vLLM does, after the model check; a null suffix is no suffix', async () => {
    for (const suffix of ['}', '']) {
      const res = await postCompletion({ model: MODEL, prompt: 'def f(', suffix });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message: 'suffix is not currently supported', type: 'BadRequestError', param: null, code: 400 } });
    }
    expect((await postCompletion({ model: 'nope', prompt: 'a', suffix: '}' })).status).toBe(404);
    expect((await postCompletion({ model: MODEL, prompt: 'say hello', suffix: null, max_tokens: 2 })).status).toBe(200);
  });

  it('takes a list of one token-id list as that prompt, and add_special_tokens: false leaves BOS out of a text prompt', async () => {
    const ids = [BOS_TOKEN_ID, ...encodeText('say hello')];
    const nested = (await (await postCompletion({ model: MODEL, prompt: [ids], max_tokens: 100 })).json()) as TextChunk;
    expect(nested.choices[0]!.text).toBe(REPLY);
    expect(nested.usage!.prompt_tokens).toBe(ids.length);
    const withBos = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 1 })).json()) as TextChunk;
    const withoutBos = (await (await postCompletion({ model: MODEL, prompt: 'say hello', max_tokens: 1, add_special_tokens: false })).json()) as TextChunk;
    expect(withBos.usage!.prompt_tokens).toBe(ids.length);
    expect(withoutBos.usage!.prompt_tokens).toBe(ids.length - 1);
  });

  it("refuses a prompt of no tokens in vLLM's words", async () => {
    for (const body of [{ prompt: [] }, { prompt: [[]] }]) {
      const res = await postCompletion({ model: MODEL, max_tokens: 1, ...body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message: 'The decoder prompt cannot be empty', type: 'BadRequestError', param: null, code: 400 } });
    }
  });

  it("refuses a missing, null or empty prompt as vLLM's CompletionRequest does, naming prompt", async () => {
    for (const body of [{}, { prompt: null }, { prompt: '' }, { prompt: '', prompt_embeds: [] }]) {
      const res = await postCompletion({ model: MODEL, max_tokens: 1, ...body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: {
          message: "1 validation error:\n  {'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, Either prompt or prompt_embeds must be provided and non-empty.'}",
          type: 'Bad Request',
          param: 'prompt',
          code: 400,
        },
      });
    }
  });

  it('refuses prompt embeddings as vLLM started without --enable-prompt-embeds does', async () => {
    const res = await postCompletion({ model: MODEL, max_tokens: 1, prompt_embeds: 'UEsDBAAACAgAAAAAAAAAAAAAAAAAAAAAAAAQABIAYXJjaGl2ZS9kYXRhLnBrbA==' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: 'You must set `--enable-prompt-embeds` to input `prompt_embeds`.', type: 'BadRequestError', param: 'prompt_embeds', code: 400 } });
  });

  it('says that it takes one prompt per request when given a list of several', async () => {
    const res = await postCompletion({ model: MODEL, prompt: ['a', 'b', 'c'] });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { message: string; param: string } }).error;
    expect(error.param).toBe('body.prompt');
    expect(error.message).toBe(
      "1 validation error:\n  {'type': 'custom', 'loc': ('body', 'prompt'), 'msg': 'The simulator takes one prompt per request; got a list of 3. Send one request per prompt.'}",
    );
    expect((await postCompletion({ model: MODEL, prompt: ['say hello'], max_tokens: 2 })).status).toBe(200);
    const idLists = await postCompletion({ model: MODEL, prompt: [[1, 2], [3, 4]] });
    expect(idLists.status).toBe(400);
    expect(((await idLists.json()) as { error: { message: string } }).error.message).toContain('The simulator takes one prompt per request; got a list of 2.');
  });
});
