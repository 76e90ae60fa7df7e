import { readdirSync } from 'node:fs';
import { SCENARIOS_DIR } from '../../sim/scenario-loader.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { parseResponses, pipelined } from '../support/raw-http.ts';
import { allSseData, fixedReplyScenario, postChat, streamedText } from './sim-test-helpers.ts';

// The emoji U+1F9EC is spelled with four byte-fallback tokens: three chunks carry "".
const REPLY = 'Hello world! \u{1F9EC} done.';
const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;
let origin: string;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', REPLY)] });
  origin = sim.url.replace(/\/v1$/, '');
});
afterAll(() => sim.close());

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; delta: Record<string, unknown>; logprobs: null; finish_reason: string | null; stop_reason?: null }>;
  usage?: { prompt_tokens: number; total_tokens: number; completion_tokens: number };
}

describe('streaming chat completion', () => {
  it('sends vLLM SSE headers, a role chunk, one chunk per token, the finish chunk, usage and [DONE]', async () => {
    const res = await postChat(sim.url, { model: 'mistral-7b-instruct-sim', messages, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('content-length')).toBeNull();
    const payloads = await allSseData(res);
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as Chunk);

    const id = chunks[0]!.id;
    expect(id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    for (const c of chunks) {
      expect(c).toMatchObject({ id, object: 'chat.completion.chunk', model: 'mistral-7b-instruct-sim', created: chunks[0]!.created });
      expect(Object.keys(c).slice(0, 5)).toEqual(['id', 'object', 'created', 'model', 'choices']);
    }
    expect(Math.abs(chunks[0]!.created - Date.now() / 1000)).toBeLessThan(60);
    expect(chunks[0]!.choices).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
    // vLLM 0.10.2 on: the role chunk ends with the prompt's token ids (null unless asked for), every later choice with its own.
    expect(payloads[0]).toMatch(/"finish_reason":null\}\],"prompt_token_ids":null\}$/);
    expect(payloads[1]).toMatch(/^\{"id":"chatcmpl-\w+","object":"chat.completion.chunk","created":\d+,"model":"mistral-7b-instruct-sim","choices":\[\{"index":0,"delta":\{"content":".*"\},"logprobs":null,"finish_reason":null,"token_ids":null\}\]\}$/);

    const tokenChunks = chunks.slice(1, -1);
    const replyTokens = encodeText(REPLY).length;
    expect(tokenChunks).toHaveLength(replyTokens + 1); // + EOS
    for (const c of tokenChunks.slice(0, -1)) {
      expect(c.choices).toEqual([{ index: 0, delta: { content: expect.any(String) }, logprobs: null, finish_reason: null, token_ids: null }]);
    }
    expect(tokenChunks.filter((c) => c.choices[0]!.delta.content === '').length).toBeGreaterThanOrEqual(3 + 1);
    expect(tokenChunks.at(-1)!.choices).toEqual([
      { index: 0, delta: { content: '' }, logprobs: null, finish_reason: 'stop', stop_reason: null, token_ids: null },
    ]);
    expect(streamedText(payloads)).toBe(REPLY);

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual({
      prompt_tokens: expect.any(Number),
      total_tokens: usageChunk.usage!.prompt_tokens + replyTokens + 1,
      completion_tokens: replyTokens + 1,
    });
  });

  it('ends with finish_reason length on the max_tokens-th token, and sends no usage chunk unless asked', async () => {
    const payloads = await allSseData(await postChat(sim.url, { messages, stream: true, max_completion_tokens: 2 }));
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as Chunk);
    expect(chunks).toHaveLength(3);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: { content: ' world' }, finish_reason: 'length', stop_reason: null });
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
  });

  it('puts running usage on every chunk with continuous_usage_stats', async () => {
    const payloads = await allSseData(
      await postChat(sim.url, { messages, stream: true, max_tokens: 3, stream_options: { include_usage: true, continuous_usage_stats: true } }),
    );
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as Chunk);
    expect(chunks.map((c) => c.usage!.completion_tokens)).toEqual([0, 1, 2, 3, 3]);
    expect(chunks.at(-1)!.choices).toEqual([]);
  });
  it('sends no usage for an explicit include_usage null (None is falsy to vLLM), and usage for an empty stream_options', async () => {
    const chunksOf = async (stream_options: unknown, path = 'chat/completions') => {
      const body = path === 'chat/completions' ? { messages, stream: true, max_tokens: 2, stream_options } : { prompt: 'say hello', stream: true, max_tokens: 2, stream_options };
      const res = await fetch(`${sim.url}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await allSseData(res)).slice(0, -1).map((p) => JSON.parse(p) as { choices: unknown[]; usage?: unknown });
    };
    for (const path of ['chat/completions', 'completions']) {
      const none = await chunksOf({ include_usage: null, continuous_usage_stats: true }, path);
      expect(none.every((c) => c.choices.length > 0 && c.usage == null)).toBe(true);
      const empty = await chunksOf({}, path);
      expect(empty.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 2 } });
    }
  });

  it('frames every event as one well-formed HTTP/1.1 chunk, also for pipelined requests on one connection', async () => {
    const ask = (max_tokens: number) => ({ model: 'mistral-7b-instruct-sim', messages, stream: true, max_tokens });
    const responses = parseResponses(await pipelined(sim.url, [ask(9), ask(4)]), 2);
    for (const [i, response] of responses.entries()) {
      // One event per chunk, but the first token's, which leaves with the role chunk as in vLLM.
      for (const chunk of response.chunks) expect(chunk).toMatch(/^(data: [^\n]*\n\n){1,2}$/);
      const data = response.chunks.join('').split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
      expect(data.at(-1)).toBe('[DONE]');
      const text = data.slice(0, -1).map((d) => (JSON.parse(d) as Chunk).choices[0]?.delta['content'] ?? '').join('');
      expect(text).toBe(REPLY.slice(0, text.length));
      expect(data.length - 1).toBe(1 + [9, 4][i]!);
    }
  });
});

describe('non-streaming chat completion', () => {
  it('returns the chat.completion object with every vLLM field', async () => {
    const res = await postChat(sim.url, { messages, temperature: 0.2, tools: [{ type: 'function', function: { name: 'f' } }], seed: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Record<string, unknown>;
    const replyTokens = encodeText(REPLY).length;
    expect(body).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]{32}$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'mistral-7b-instruct-sim',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: REPLY,
            refusal: null,
            annotations: null,
            audio: null,
            function_call: null,
            tool_calls: [],
            reasoning_content: null,
          },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: null,
          token_ids: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
        completion_tokens: replyTokens + 1,
        prompt_tokens_details: null,
      },
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    });
  });

  it("builds the id from the client's X-Request-Id, else its body's request_id, as vLLM does", async () => {
    const byHeader = await postChat(sim.url, { messages, max_tokens: 1 }, { headers: { 'content-type': 'application/json', 'x-request-id': 'myreq123' } });
    expect(((await byHeader.json()) as { id: string }).id).toBe('chatcmpl-myreq123');
    const byBody = (await (await postChat(sim.url, { messages, max_tokens: 1, request_id: 'abc' })).json()) as { id: string };
    expect(byBody.id).toBe('chatcmpl-abc');
    const streamed = await allSseData(await postChat(sim.url, { messages, max_tokens: 2, stream: true, request_id: 'abc' }, { headers: { 'content-type': 'application/json', 'x-request-id': 'wins' } }));
    expect(streamed.slice(0, -1).map((p) => (JSON.parse(p) as { id: string }).id)).toEqual(streamed.slice(0, -1).map(() => 'chatcmpl-wins'));
    const completion = await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'r1' }, body: JSON.stringify({ prompt: 'hi', max_tokens: 1 }) });
    expect(((await completion.json()) as { id: string }).id).toBe('cmpl-r1');
  });

  it('names a scenario alias model in the response', async () => {
    const body = (await (await postChat(sim.url, { model: 'sim-hello', messages })).json()) as { model: string };
    expect(body.model).toBe('sim-hello');
  });
});

describe('errors', () => {
  async function errorOf(res: Response) {
    return { status: res.status, body: (await res.json()) as { error: { message: string; type: string; param: string | null; code: number } } };
  }

  it('answers a body that fails validation with 400 in vLLM\'s error shape', async () => {
    const { status, body } = await errorOf(await postChat(sim.url, { messages: [{ role: 'robot', content: 'x' }] }));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: 'Bad Request', code: 400, param: 'body.messages.0.role' });
    expect(body.error.message).toMatch(/^1 validation error:\n/);
  });

  it('rejects invalid JSON, a missing JSON content type, max_tokens 0 and stream_options without stream', async () => {
    const badJson = await fetch(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' });
    expect((await errorOf(badJson)).status).toBe(400);
    const text = await fetch(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect((await errorOf(text)).body.error.message).toContain("Only 'application/json' is allowed");
    expect((await errorOf(await postChat(sim.url, { messages, max_tokens: 0 }))).status).toBe(400);
    const opts = await errorOf(await postChat(sim.url, { messages, stream_options: { include_usage: true } }));
    expect(opts.body.error.message).toContain('Stream options can only be defined when `stream=True`.');
  });

  it("locates bad JSON as FastAPI does (the decoder's position), and reads an empty body as a missing one", async () => {
    const post = (body: string) => fetch(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const [raw, pos] of [['{oops', 1], ['{"messages":', 12], ['{"a":1}x', 7]] as const) {
      const { status, body } = await errorOf(await post(raw));
      expect(status).toBe(400);
      expect(body.error.message).toBe(`1 validation error:\n  {'type': 'json_invalid', 'loc': ('body', ${pos}), 'msg': 'JSON decode error'}`);
    }
    const empty = await errorOf(await post(''));
    expect(empty).toMatchObject({ status: 400, body: { error: { message: "1 validation error:\n  {'type': 'missing', 'loc': ('body',), 'msg': 'Field required'}", param: 'body' } } });
  });

  it('answers an unknown model as vLLM does: 404 NotFoundError', async () => {
    const { status, body } = await errorOf(await postChat(sim.url, { model: 'gpt-4o', messages }));
    expect(status).toBe(404);
    expect(body).toEqual({ error: { message: 'The model `gpt-4o` does not exist.', type: 'NotFoundError', param: 'model', code: 404 } });
  });

  it('answers an unknown scenario and a too-large max_tokens with 400 BadRequestError', async () => {
    const unknown = await errorOf(await postChat(sim.url, { scenario: 'nope', messages }));
    expect(unknown).toMatchObject({ status: 400, body: { error: { type: 'BadRequestError', param: 'scenario' } } });
    const tooLong = await errorOf(await postChat(sim.url, { messages, max_tokens: 10_000_000 }));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain("This model's maximum context length is 32768 tokens");
  });

  it('answers unknown routes with 404 and wrong methods with 405, in FastAPI\'s shape', async () => {
    const missing = await fetch(`${origin}/v1/completions-nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Not Found' });
    const wrong = await fetch(`${sim.url}/chat/completions`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toEqual({ detail: 'Method Not Allowed' });
    expect((await fetch(`${sim.url}/models`, { method: 'POST' })).status).toBe(405);
  });

  // FastAPI's redirect_slashes: a client given a base URL with a trailing slash still reaches vLLM.
  it('answers a route with its trailing slash toggled with 307 to the route, as Starlette does', async () => {
    const models = await fetch(`${sim.url}/models/?x=1`, { redirect: 'manual' });
    expect(models.status).toBe(307);
    expect(models.headers.get('location')).toBe(`${sim.url}/models?x=1`);
    const chat = await fetch(`${sim.url}/chat/completions/`, { method: 'POST', body: '{}', redirect: 'manual' });
    expect(chat.status).toBe(307);
    expect(chat.headers.get('location')).toBe(`${sim.url}/chat/completions`);
    // A 307 keeps the method and body: fetch follows it to a completion.
    const followed = await fetch(`${sim.url}/chat/completions/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
    expect(followed.status).toBe(200);
    expect((await fetch(`${sim.url}/nothing/`, { redirect: 'manual' })).status).toBe(404);
  });

  it('serves the metrics under every path and method below /metrics, as vLLM mounts them', async () => {
    for (const [path, method] of [['/metrics/', 'GET'], ['/metrics', 'POST']] as const) {
      const res = await fetch(`${origin}${path}`, { method });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('vllm:num_requests_running');
    }
  });
});

describe('other routes', () => {
  it('lists the served model and the scenario aliases in vLLM\'s ModelList shape', async () => {
    const body = (await (await fetch(`${sim.url}/models`)).json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(body.object).toBe('list');
    expect(body.data[0]).toMatchObject({
      id: 'mistral-7b-instruct-sim',
      object: 'model',
      owned_by: 'vllm',
      root: 'mistral-7b-instruct-sim',
      parent: null,
      max_model_len: 32768,
      permission: [expect.objectContaining({ object: 'model_permission', allow_sampling: true, organization: '*' })],
    });
    // The served model, the in-memory scenario, then one alias per shipped scenario file, in file-name order.
    const shipped = readdirSync(SCENARIOS_DIR).filter((f) => f.endsWith('.json')).sort().map((f) => `sim-${f.replace(/\.json$/, '')}`);
    expect(shipped).toContain('sim-sine-wave');
    expect(body.data.map((m) => m.id)).toEqual(['mistral-7b-instruct-sim', 'sim-hello', ...shipped]);
    expect(body.data[1]).toMatchObject({ parent: 'mistral-7b-instruct-sim', max_model_len: null });
  });

  it('answers /health with an empty 200', async () => {
    const res = await fetch(`${origin}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('serves the counters as JSON and as Prometheus text with vLLM metric names', async () => {
    const counters = (await (await fetch(`${origin}/sim/counters`)).json()) as Record<string, number>;
    expect(counters).toMatchObject({ running: 0, waiting: 0 });
    expect(counters.requestsFinished).toBeGreaterThan(0);
    const res = await fetch(`${origin}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE vllm:num_requests_running gauge');
    expect(text).toMatch(/^vllm:num_requests_running\{model_name="mistral-7b-instruct-sim",engine="0"\} 0\.0$/m);
    expect(text).toMatch(/^vllm:num_requests_waiting\{model_name="mistral-7b-instruct-sim",engine="0"\} 0\.0$/m);
    expect(text).toMatch(/^vllm:generation_tokens_total\{model_name="mistral-7b-instruct-sim",engine="0"\} [1-9]\d*\.0$/m);
    expect(text).toMatch(/^vllm:time_to_first_token_seconds_count\{model_name="mistral-7b-instruct-sim",engine="0"\} [1-9]/m);
    expect(text).toContain('vllm:request_success_total{model_name="mistral-7b-instruct-sim",engine="0",finished_reason="stop"}');
    expect(text).toMatch(/^vllm:request_success_total\{model_name="mistral-7b-instruct-sim",engine="0",finished_reason="abort"\} \d+\.0$/m);
    expect(text).toContain('sim:aborted_sequences_total');
  });
});
