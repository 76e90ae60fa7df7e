import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID_HEADER } from '../../gateway/request-id.ts';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

const hello = { model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }] };

describe('HTTP API errors (OpenAI error shape, gateway keeps serving)', () => {
  let sim: SimHandle;
  let gateway: GatewayHandle;
  let locked: GatewayHandle;
  let orphan: GatewayHandle;
  let small: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: { ...E2E_PROFILE, decode: { baseMs: 2, perSeqMs: 0 } } });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
    locked = await startGateway({ port: 0, upstream: { baseUrl: sim.url }, apiKeys: ['s3cret'] }, { tools: new Map() });
    // Nothing listens on port 9 (discard) on loopback: connection refused.
    orphan = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    small = await startGateway({ port: 0, upstream: { baseUrl: sim.url }, maxBodyBytes: 1000 }, { tools: new Map() });
  });
  afterAll(async () => {
    await Promise.all([gateway?.close(), locked?.close(), orphan?.close(), small?.close()]);
    await sim?.close();
  });

  const expectOpenAIError = (json: any, code: string) => {
    expect(json).toEqual({ error: { message: expect.any(String), type: expect.any(String), param: expect.anything(), code } });
  };

  it('rejects malformed JSON', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', '{"model": ');
    expect(res.status).toBe(400);
    expectOpenAIError({ ...res.json, error: { ...res.json.error, param: res.json.error.param ?? 'none' } }, 'invalid_request');
    expect(res.json.error.message).toMatch(/not valid JSON/);
  });

  it('answers 400, not a 502 that blames the upstream, for a body nested too deep to be sent on', async () => {
    // Within maxBodyBytes and readable, but deeper than JSON.stringify's stack when it goes upstream.
    const depth = 200_000;
    const body = `{"model": "${SIM_MODEL}", "messages": [{"role": "user", "content": "hi"}], "vendor_extra": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await postJson(gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(400);
    expectOpenAIError({ ...res.json, error: { ...res.json.error, param: res.json.error.param ?? 'none' } }, 'invalid_request');
    expect(res.json.error.message).toMatch(/cannot be sent upstream/);
  });

  it('refuses a body over maxBodyBytes with 413, then serves the next request', async () => {
    for (const size of [2_000, 200_000]) {
      const res = await postJson(small.url, '/v1/chat/completions', { ...hello, messages: [{ role: 'user', content: 'a'.repeat(size) }] });
      expect(res.status).toBe(413);
      expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large', message: 'request body exceeds 1000 bytes' });
    }
    expect((await postJson(small.url, '/v1/chat/completions', hello)).status).toBe(200);
  });

  it('closes the connection of an endless chunked body after its 413, instead of draining it until the request timeout', async () => {
    const socket = connect(small.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (bytes: Buffer) => (answer += bytes.toString('latin1')));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
    const chunk = `400\r\n${' '.repeat(0x400)}\r\n`;
    const sending = setInterval(() => socket.writable && socket.write(chunk), 2);
    try {
      await closed;
    } finally {
      clearInterval(sending);
    }
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"request_too_large"');
    expect((await postJson(small.url, '/v1/chat/completions', hello)).status).toBe(200);
  });

  it.each(['/v1/chat/completions', '/v1/chat/completions/'])('refuses a body declared too large under Expect: 100-continue before the client sends it (%s)', async (path) => {
    const answer = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = request(`${small.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '5000', expect: '100-continue' } });
      req.on('continue', () => (continued = true));
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode!, continued });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer).toEqual({ status: 413, continued: false });
    expect((await postJson(small.url, '/v1/chat/completions', hello)).status).toBe(200);
  });

  it('counts a client that leaves in the middle of its body as client_aborted, not as a gateway error', async () => {
    const socket = connect(small.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"model"`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    const outcome = (name: string) => async () => (await (await fetch(`${small.url}/metrics`)).text()).includes(`conveyor_requests_total{outcome="${name}"} 1`);
    await eventually(outcome('client_aborted'), 'the request counted as client_aborted');
    expect(await (await fetch(`${small.url}/metrics`)).text()).not.toContain('outcome="internal_error"');
  });

  it('refuses a compressed body with 415 rather than reading it as JSON', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', hello, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(415);
    expect(res.json.error).toMatchObject({ code: 'unsupported_media_type', message: expect.stringContaining('Content-Encoding "gzip"') });
  });

  it('takes null for any optional field, as OpenAI and vLLM do, on the request and on history messages', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', {
      ...hello,
      stream: null,
      tools: null,
      tool_choice: null,
      stream_options: null,
      partial_execution: null,
      max_tool_rounds: null,
      messages: [
        { role: 'user', content: 'hi', name: null },
        { role: 'assistant', content: 'hello', name: null, tool_calls: null },
        { role: 'user', content: 'again' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.json.object).toBe('chat.completion');
  });

  it("takes OpenAI's deprecated function-calling turns (a function_call, then a role function result), as vLLM does, and wants the function's name", async () => {
    const history = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
      { role: 'function', name: 'get_weather', content: 'sunny' },
    ];
    const res = await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: history });
    expect(res.status).toBe(200);
    expect(res.json.object).toBe('chat.completion');
    const nameless = await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [{ role: 'function', content: 'sunny' }] });
    expect(nameless.status).toBe(400);
    expect(nameless.json.error.param).toBe('messages.[0].name');
  });

  it('takes null inside stream_options too, read as left out (no usage chunk)', async () => {
    const res = await streamChat(gateway.url, { ...hello, max_tokens: 3, stream_options: { include_usage: null, continuous_usage_stats: null } });
    expect(res.status).toBe(200);
    expect(res.done).toBe(true);
    expect(res.chunks.some((chunk) => chunk.usage !== undefined)).toBe(false);
    const counted = await streamChat(gateway.url, { ...hello, max_tokens: 3, stream_options: { include_usage: true, continuous_usage_stats: null } });
    // The others carry `usage: null`, as OpenAI's do.
    expect(counted.chunks.filter((chunk) => chunk.usage != null)).toHaveLength(1);
  });

  /**
   * OpenAI adds the usage chunk only for `include_usage: true`; vLLM's own StreamOptions reads a
   * left-out include_usage as true. The gateway keeps OpenAI's rule: a client that did not ask gets
   * no chunk without choices, which a loop reading `chunk.choices[0]` breaks on.
   */
  it('gives no usage chunk for stream_options {} or continuous_usage_stats alone, include_usage left out, as OpenAI does', async () => {
    for (const stream_options of [{}, { continuous_usage_stats: true }]) {
      const res = await streamChat(gateway.url, { ...hello, max_tokens: 3, stream_options });
      expect(res.status, JSON.stringify(stream_options)).toBe(200);
      expect(res.done).toBe(true);
      expect(res.chunks.every((chunk) => chunk.usage === undefined && chunk.choices.length === 1), JSON.stringify(stream_options)).toBe(true);
    }
  });

  it('refuses two tools of one name, naming the second', async () => {
    const tool = (description: string) => ({ type: 'function', function: { name: 'lookup', description, parameters: { type: 'object' } } });
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools: [tool('one'), { type: 'function', function: { name: 'other' } }, tool('two')] });
    expect(res.status).toBe(400);
    expectOpenAIError(res.json, 'invalid_request');
    expect(res.json.error.param).toBe('tools.[2].function.name');
    expect(res.json.error.message).toMatch(/"lookup" is listed more than once/);
  });

  it('refuses a tool name OpenAI would refuse (a space, a dot, 65 characters), naming the tool', async () => {
    for (const [index, name] of [[0, 'look up'], [1, 'search.web'], [0, 'x'.repeat(65)]] as const) {
      const tools = [{ type: 'function', function: { name: index === 0 ? name : 'fine_name-1' } }, ...(index === 1 ? [{ type: 'function', function: { name } }] : [])];
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools });
      expect(res.status).toBe(400);
      expectOpenAIError(res.json, 'invalid_request');
      expect(res.json.error.param).toBe(`tools.[${index}].function.name`);
      expect(res.json.error.message).toContain(`${JSON.stringify(name)} must be 1-64 letters, digits`);
    }
    const fine = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools: [{ type: 'function', function: { name: 'A-z_0'.padEnd(64, '9') } }] });
    expect(fine.status).toBe(200);
  });

  it("refuses a function's parameters or description of the wrong type, as OpenAI does, and takes null for either", async () => {
    for (const [field, value] of [['parameters', 'x'], ['parameters', [1]], ['description', 7]] as const) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools: [{ type: 'function', function: { name: 'lookup', [field]: value } }] });
      expect(res.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: `tools.[0].function.${field}` });
    }
    const nulls = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools: [{ type: 'function', function: { name: 'lookup', description: null, parameters: null } }] });
    expect(nulls.status).toBe(200);
  });

  it('refuses stream_options without stream, and a function tool without its function, as OpenAI and vLLM do', async () => {
    const options = await postJson(gateway.url, '/v1/chat/completions', { ...hello, stream_options: { include_usage: true } });
    expect(options.status).toBe(400);
    expect(options.json.error).toMatchObject({ param: 'stream_options', message: 'stream_options: stream_options is only allowed when stream is true' });
    const tool = await postJson(gateway.url, '/v1/chat/completions', { ...hello, tools: [{ type: 'function' }] });
    expect(tool.status).toBe(400);
    expect(tool.json.error).toMatchObject({ param: 'tools.[0].function', message: 'tools.[0].function: required for a tool of type "function"' });
  });

  it('names tool_parser for an unknown one, counts it as invalid_request, and gives every refusal a request id', async () => {
    const res = await postJson(small.url, '/v1/chat/completions', { ...hello, tool_parser: 'bogus' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'tool_parser', code: 'invalid_request' });
    expect(res.json.error.message).toContain('unknown tool-call format "bogus"');
    expect(res.headers.get(REQUEST_ID_HEADER)).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect((await postJson(small.url, '/v1/chat/completions', { model: SIM_MODEL })).headers.get(REQUEST_ID_HEADER)).toMatch(/^chatcmpl-/);
    expect(await (await fetch(`${small.url}/metrics`)).text()).toMatch(/^conveyor_requests_total\{outcome="invalid_request"\} 2$/m);
  });

  it('refuses a body not sent as application/json with 415, so a web page cannot post one without a CORS preflight', async () => {
    const counters = sim.counters().requestsReceived;
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const res = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        // A page's typeless Blob comes with its Origin, as a browser sends every POST (without one it is read as JSON, as vLLM reads it).
        headers: type ? { 'content-type': type } : { origin: 'https://evil.example' },
        body: type ? JSON.stringify(hello) : new Blob([JSON.stringify(hello)]),
      });
      expect(res.status).toBe(415);
      const json = await res.json();
      expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
      expect(json.error.message).toContain('application/json');
    }
    expect(sim.counters().requestsReceived).toBe(counters);
    const res = await postJson(gateway.url, '/v1/chat/completions', hello, { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
  });

  it('names the offending field of an invalid body', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [{ role: 'wizard', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_request');
    expect(res.json.error.param).toBe('messages.[0].role');
  });

  it('says which required field is missing', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ message: 'model: required', param: 'model', code: 'invalid_request' });
  });

  it('refuses n > 1 clearly', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, n: 2 });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('n');
  });

  it('refuses logprobs: true clearly instead of answering without them, and takes logprobs: false', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, logprobs: true, top_logprobs: 2 });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('logprobs');
    expect(res.json.error.message).toContain('logprobs are not supported');
    expect((await postJson(gateway.url, '/v1/chat/completions', { ...hello, logprobs: false })).status).toBe(200);
  });

  it('says what a wrong tool_choice, logprobs, token limit or max_tool_rounds should be, not zod\'s "Invalid input"', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ tool_choice: 'sometimes' }, 'tool_choice', /^tool_choice: must be "none", "auto", "required" or \{"type": "function"/],
      [{ tool_choice: { type: 'allowed_tools', allowed_tools: {} } }, 'tool_choice', /the "allowed_tools" tool choice is not supported/],
      [{ logprobs: 'yes' }, 'logprobs', /^logprobs: must be a boolean$/],
      [{ max_tokens: 0 }, 'max_tokens', /^max_tokens: must be a positive integer$/],
      [{ max_completion_tokens: 1.5 }, 'max_completion_tokens', /^max_completion_tokens: must be a positive integer$/],
      // The extension's range, which the README states (1 to 64), not "Too big: expected number to be <=64".
      [{ max_tool_rounds: 65 }, 'max_tool_rounds', /^max_tool_rounds: must be an integer from 1 to 64$/],
      [{ max_tool_rounds: 0 }, 'max_tool_rounds', /^max_tool_rounds: must be an integer from 1 to 64$/],
      [{ max_tool_rounds: '3' }, 'max_tool_rounds', /^max_tool_rounds: must be an integer from 1 to 64$/],
    ];
    for (const [extra, param, message] of cases) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.json.error.param).toBe(param);
      expect(res.json.error.message).toMatch(message);
    }
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    expect((await getJson(gateway.url, '/v1/nope')).status).toBe(404);
    const wrong = await getJson(gateway.url, '/v1/chat/completions');
    expect(wrong.status).toBe(405);
    expect(wrong.json.error.code).toBe('method_not_allowed');
    expect((await getJson(gateway.url, '/v1/requests/unknown-id/timeline')).status).toBe(404);
    // RFC 9110: a 405 says what the path takes; HEAD is GET without the body.
    expect((await fetch(`${gateway.url}/v1/chat/completions`)).headers.get('allow')).toBe('POST');
    expect((await fetch(`${gateway.url}/health`, { method: 'DELETE' })).headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${gateway.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers a model id with a malformed percent-escape 400, not 500 internal_error', async () => {
    const res = await getJson(gateway.url, '/v1/models/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect((await getJson(gateway.url, `/v1/models/${encodeURIComponent(SIM_MODEL)}`)).status).toBe(200);
  });

  it('answers a plain GET on the request events WebSocket with 426, not by forwarding it upstream', async () => {
    const res = await fetch(`${gateway.url}/v1/requests/chatcmpl-x/events`);
    expect(res.status).toBe(426);
    expect(res.headers.get('upgrade')).toBe('websocket');
    expect((await res.json()).error.code).toBe('upgrade_required');
  });

  it('requires a bearer key when keys are configured', async () => {
    const anonymous = await postJson(locked.url, '/v1/chat/completions', hello);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('invalid_api_key');
    // A refusal on the chat route like any other: the SDK's AuthenticationError reports its requestID.
    expect(anonymous.headers.get(REQUEST_ID_HEADER)).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(anonymous.headers.get('x-request-id')).toBe(anonymous.headers.get(REQUEST_ID_HEADER));
    const wrong = await postJson(locked.url, '/v1/chat/completions', hello, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    const right = await postJson(locked.url, '/v1/chat/completions', hello, { authorization: 'Bearer s3cret' });
    expect(right.status).toBe(200);
    expect((await getJson(locked.url, '/health')).status).toBe(200);
  });

  it('maps an unreachable upstream to 502 and keeps serving', async () => {
    const res = await postJson(orphan.url, '/v1/chat/completions', { ...hello, stream: true });
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe('upstream_connection_error');
    // The upstream's address is the operator's (the log's replica line names it), not every client's.
    expect(res.json.error.message).toBe('the connection to the upstream failed (ECONNREFUSED)');
    expect(JSON.stringify(res.json)).not.toContain('127.0.0.1:9');
    const models = await getJson(orphan.url, '/v1/models');
    expect(models.status).toBe(502);
    expect(JSON.stringify(models.json)).not.toContain('127.0.0.1:9');
    expect((await getJson(orphan.url, '/health')).status).toBe(200);
  });

  it('passes an upstream 4xx through with its message, naming the field as OpenAI does', async () => {
    // The field the upstream named comes through too (the simulator checks as vLLM does), without
    // FastAPI's `body.` in front: top_k is vLLM's, which the gateway leaves to it.
    const bad = await postJson(gateway.url, '/v1/chat/completions', { ...hello, top_k: 1.5 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', code: 'upstream_response_error', param: 'top_k' });
    expect(bad.json.error.message).toContain("'loc': ('body', 'top_k')");
  });

  it('answers an unknown model on chat 404 model_not_found on param model, as GET /v1/models/:id does', async () => {
    // vLLM answers an unknown model with 404 "The model `…` does not exist."; OpenAI's code for it is model_not_found.
    for (const stream of [false, true]) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, model: 'no-such-model', stream });
      expect(res.status).toBe(404);
      expect(res.json.error).toEqual({ type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: 'The model `no-such-model` does not exist.' });
    }
    const retrieved = await getJson(gateway.url, '/v1/models/no-such-model');
    expect(retrieved.status).toBe(404);
    expect(retrieved.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    expect(await (await fetch(`${gateway.url}/metrics`)).text()).toMatch(/^conveyor_requests_total\{outcome="model_not_found"\} 2$/m);
  });

  it('type-checks the OpenAI sampling fields itself, naming each as OpenAI does, before anything goes upstream', async () => {
    const received = sim.counters().requestsReceived;
    const refused: Array<[Record<string, unknown>, string, string]> = [
      [{ seed: 4.5 }, 'seed', 'seed: must be an integer'],
      [{ seed: '42' }, 'seed', 'seed: must be an integer'],
      [{ temperature: 'hot' }, 'temperature', 'temperature: must be a number from 0 to 2'],
      [{ temperature: 2.5 }, 'temperature', 'temperature: must be a number from 0 to 2'],
      [{ top_p: 1.5 }, 'top_p', 'top_p: must be a number from 0 to 1'],
      [{ presence_penalty: -3 }, 'presence_penalty', 'presence_penalty: must be a number from -2 to 2'],
      [{ frequency_penalty: '1' }, 'frequency_penalty', 'frequency_penalty: must be a number from -2 to 2'],
      [{ stop: 5 }, 'stop', 'stop: must be a string or an array of strings'],
      [{ stop: ['a', 5] }, 'stop', 'stop: must be a string or an array of strings'],
      [{ logit_bias: { '50256': 'x' } }, 'logit_bias.50256', 'logit_bias.50256: must be a number'],
      [{ user: 7 }, 'user', 'user: must be a string'],
    ];
    for (const [field, param, message] of refused) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, ...field });
      expect(res.status, JSON.stringify(field)).toBe(400);
      expect(res.json.error, JSON.stringify(field)).toEqual({ type: 'invalid_request_error', code: 'invalid_request', param, message });
    }
    expect(sim.counters().requestsReceived).toBe(received);
    // What OpenAI and vLLM both take still passes, and vLLM's extras beyond OpenAI's (five stops) too.
    const taken = { seed: 4, temperature: 0, top_p: 1, presence_penalty: -2, frequency_penalty: 2, stop: ['a', 'b', 'c', 'd', 'e'], logit_bias: { '2': -100 }, user: 'u-1' };
    expect((await postJson(gateway.url, '/v1/chat/completions', { ...hello, ...taken })).status).toBe(200);
    expect((await postJson(gateway.url, '/v1/chat/completions', { ...hello, stop: 'x', seed: null, temperature: null })).status).toBe(200);
    // A random 64-bit seed, as clients draw them: an integer past 2^53, which zod's .int() refused.
    const bigSeed = `{"model":${JSON.stringify(hello.model)},"messages":${JSON.stringify(hello.messages)},"seed":9223372036854775807}`;
    expect((await postJson(gateway.url, '/v1/chat/completions', bigSeed)).status).toBe(200);
  });

  /** OpenAI's `metadata` (16 string pairs at most, keys ≤ 64 characters, values ≤ 512): `"x"` there passed, refused by OpenAI. */
  it('refuses a metadata that is not an object of string values (or has too many or too long keys or values) at param metadata, as OpenAI does', async () => {
    const received = sim.counters().requestsReceived;
    const shape = 'metadata: must be an object of at most 16 string values, keys up to 64 characters and values up to 512';
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const refused: Array<[unknown, string]> = [
      ['x', `${shape}, not a string`],
      [['a'], `${shape}, not an array`],
      [7, `${shape}, not a number`],
      [{ team: 7 }, `${shape}; the value of "team" is a number`],
      [{ team: { name: 'a' } }, `${shape}; the value of "team" is an object`],
      [seventeen, `${shape}; it has 17 keys`],
      [{ ['k'.repeat(65)]: 'v' }, `${shape}; the key "${'k'.repeat(64)}…" has 65 characters`],
      [{ team: 'v'.repeat(513) }, `${shape}; the value of "team" has 513 characters`],
    ];
    for (const [metadata, message] of refused) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...hello, metadata });
      expect(res.status, JSON.stringify(metadata)).toBe(400);
      expect(res.json.error, JSON.stringify(metadata)).toEqual({ type: 'invalid_request_error', code: 'invalid_request', param: 'metadata', message });
    }
    expect(sim.counters().requestsReceived).toBe(received);
    // The limits themselves pass, and so do null and an empty object.
    const full = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)]));
    for (const metadata of [full, {}, null, { team: 'search' }]) {
      expect((await postJson(gateway.url, '/v1/chat/completions', { ...hello, metadata })).status, JSON.stringify(metadata)).toBe(200);
    }
  });

  it('says what a message content must be when it is missing or of the wrong type, for every role that needs one', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ role: 'user' }, 'required for a user message: a string or an array of content parts'],
      [{ role: 'system' }, 'required for a system message: a string or an array of content parts'],
      [{ role: 'tool', tool_call_id: 'call_1' }, 'required for a tool message: a string or an array of content parts'],
      [{ role: 'user', content: 5 }, 'must be a string or an array of content parts, not number'],
      [{ role: 'user', content: null }, 'must be a string or an array of content parts, not null'],
      [{ role: 'user', content: [{ text: 'hi' }] }, 'must be a string or an array of content parts; each part an object with a string "type" (e.g. {"type": "text", "text": "…"})'],
    ];
    for (const [message, expected] of cases) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [message] });
      expect(res.status).toBe(400);
      expect(res.json.error, JSON.stringify(message)).toMatchObject({ param: 'messages.[0].content', message: `messages.[0].content: ${expected}`, code: 'invalid_request' });
    }
    // An assistant turn that only called tools needs none.
    const history = [{ role: 'user', content: 'hi' }, { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }];
    expect((await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: history })).status).toBe(200);
  });

  it("answers 502, not the client's 401, when the upstream refuses the gateway's own key", async () => {
    const keyed = await startSim({ profile: E2E_PROFILE, apiKey: 'upstream-key' });
    const wrongKey = await startGateway({ port: 0, upstream: { baseUrl: keyed.url, apiKey: 'stale-key' } }, { tools: new Map() });
    try {
      const res = await postJson(wrongKey.url, '/v1/chat/completions', hello);
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ type: 'server_error', code: 'upstream_response_error' });
      expect(res.json.error.message).toMatch(/^the upstream refused the gateway's own credentials \(HTTP 401: .*\); check its upstream API key$/);
    } finally {
      await wrongKey.close();
      await keyed.close();
    }
  });

  it("answers 502, not the client's 404, when the upstream does not serve the model the gateway names (--model)", async () => {
    const misnamed = await startGateway({ port: 0, upstream: { baseUrl: sim.url, model: 'no-such-model' } }, { tools: new Map() });
    try {
      for (const stream of [false, true]) {
        // The client's own model name is fine: the gateway sends its own instead.
        const res = await postJson(misnamed.url, '/v1/chat/completions', { ...hello, stream });
        expect(res.status).toBe(502);
        expect(res.json.error).toEqual({
          type: 'server_error',
          code: 'upstream_model_not_served',
          param: null,
          message: "the gateway is set to a model its upstream does not serve ('no-such-model'); its operator must change upstream.model (--model) or the upstream",
        });
      }
    } finally {
      await misnamed.close();
    }
  });

  it('still serves a good request after all of the above', async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', hello);
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content.length).toBeGreaterThan(0);
  });
});
