import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, listingModels, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const echo = answeringTool('echo', (args) => String(args.text));
const ask = (extra: Record<string, unknown> = {}) => ({ model: MODEL, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'say hi' }], ...extra });

/** Round 1 calls `echo` (Hermes markup, which the gateway reads for MODEL); a later round gets `later`. */
function callThen(later: (res: ServerResponse) => void) {
  return (_req: unknown, res: ServerResponse, body: unknown) => {
    if ((body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')) return later(res);
    sseHeaders(res);
    const call = '<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>';
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: call }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
}

describe('a non-streamed answer', () => {
  it('tells the SDKs not to retry a failure that came after a tool ran (they would run it again), and only then', async () => {
    const gw = await scripted.start(
      callThen((res) => void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"engine dead","type":"InternalServerError","code":500}}')),
      { tools: toolMap(echo) },
    );
    const failed = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(failed.status).toBe(502);
    expect(failed.headers.get('x-should-retry')).toBe('false');

    // No tool had run: a retry repeats nothing, so it is the client's to make.
    const first = await scripted.start((_req, res) => void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"engine dead"}}'), { tools: toolMap(echo) });
    const refused = await postJson(first.url, '/v1/chat/completions', ask());
    expect(refused.status).toBe(502);
    expect(refused.headers.get('x-should-retry')).toBeNull();
  });

  it('has content null for a turn that only called tools, as a stream has it', async () => {
    const gw = await scripted.start(callThen(() => {}), { tools: toolMap(echo) });
    const res = await postJson(gw.url, '/v1/chat/completions', ask({ max_tool_rounds: 1 }));
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBeNull();
    expect(res.json.conveyor.messages[0]).toMatchObject({ role: 'assistant', content: null });
  });

  it('has content null for calls the client runs with only whitespace between them, as vLLM drops it', async () => {
    const calls = ['Paris', 'Oslo'].map((city) => `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}"}}\n</tool_call>`).join('\n');
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: `${calls}\n` }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tools: [{ type: 'function', function: { name: 'get_weather' } }], messages: [{ role: 'user', content: 'weather?' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0]).toMatchObject({ message: { content: null }, finish_reason: 'tool_calls' });
    expect(res.json.choices[0].message.tool_calls.map((c: { function: { arguments: string } }) => JSON.parse(c.function.arguments).city)).toEqual(['Paris', 'Oslo']);
  });
});

describe('whitespace before the first call', () => {
  // Regression: it went out as a content delta when streamed, where the non-streamed answer had
  // content null; vLLM's parsers strip it, as the whitespace between and after calls.
  it('is frame, not content, streamed or not, in each format', async () => {
    const outputs = {
      hermes: '\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      mistral: ' [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    };
    for (const format of ['hermes', 'mistral'] as const) {
      const text = outputs[format];
      const gw = await scripted.start((_req, res) => {
        sseHeaders(res);
        // Cut in the whitespace and in the opener, as tokens come.
        const deltas = [text.slice(0, 1), text.slice(1, 4), text.slice(4)].map((t) => vllmChunk({ content: t }));
        res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas, vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      });
      const body = { model: MODEL, tool_parser: format, tools: [{ type: 'function', function: { name: 'get_weather' } }], messages: [{ role: 'user', content: 'weather?' }] };
      const res = await postJson(gw.url, '/v1/chat/completions', body);
      expect(res.json.choices[0], format).toMatchObject({ message: { content: null }, finish_reason: 'tool_calls' });
      const streamed = await streamChat(gw.url, { ...body, stream: true });
      expect(streamed.content, format).toBe('');
      expect(streamed.chunks.flatMap((c) => c.choices?.map((choice) => choice.finish_reason) ?? []), format).toContain('tool_calls');
    }
  });
});

describe('the text between rounds', () => {
  it('gets no blank line of the gateway after a round whose text was only whitespace', async () => {
    // The newlines before and between the calls are the format's frame: the round wrote no text.
    const calls = '\n' + ['a', 'b'].map((text) => `<tool_call>\n{"name": "echo", "arguments": {"text": "${text}"}}\n</tool_call>`).join('\n');
    const gw = await scripted.start(
      (_req, res, body) => {
        sseHeaders(res);
        const answered = (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: answered ? 'Both said hi.' : calls }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(echo) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    // The gateway adds no blank line before the answer, streamed or not.
    expect(res.json.choices[0].message.content).toBe('Both said hi.');
    const streamed = await streamChat(gw.url, ask());
    expect(streamed.content).toBe('Both said hi.');
  });

  it('still opens a blank line between a round that wrote text and the next one', async () => {
    const gw = await scripted.start(
      (_req, res, body) => {
        sseHeaders(res);
        const answered = (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
        const reply = answered ? 'Done.' : 'Let me check.<tool_call>\n{"name": "echo", "arguments": {"text": "a"}}\n</tool_call>';
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: reply }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(echo) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.json.choices[0].message.content).toBe('Let me check.\n\nDone.');
  });
});

describe('the model an answer names', () => {
  it("is the one the gateway serves under --model, whatever name the client sent, streamed or not", async () => {
    const seen: string[] = [];
    const gw = await scripted.start(
      listingModels((_req, res, body) => {
        seen.push((body as { model: string }).model);
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hi.' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      }, ['served-model']),
      {},
      { upstream: { baseUrl: 'unused', model: 'served-model' } },
    );
    const whole = await postJson(gw.url, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.json.model).toBe('served-model');
    const streamed = await streamChat(gw.url, { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(new Set(streamed.chunks.map((c) => c.model))).toEqual(new Set(['served-model']));
    expect(seen).toEqual(['served-model', 'served-model']);
  });
});

describe('an error the upstream sends inside its 200 stream', () => {
  it("is the server's failure (502 server_error), though vLLM gives it code 400: the request had been accepted", async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hel' }), 'data: {"error":{"message":"engine fell over","type":"BadRequestError","param":null,"code":400}}\n\n', DONE].join(''));
    });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ message: 'engine fell over', type: 'server_error', code: 'upstream_response_error' });
  });
});

describe('an error the upstream sends inside its 200 stream in a later round', () => {
  // Regression: round 2's in-stream error was rebuilt as "round 2 … was refused by the upstream"
  // with its flag lost, and reached the client as 400 invalid_request_error, which SDKs do not retry.
  it("is the server's failure too, not a refusal of the prompt the tools grew", async () => {
    const gw = await scripted.start(
      (_req, res, body) => {
        sseHeaders(res);
        const hasResult = (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
        const failure = 'data: {"error":{"message":"engine fell over","type":"BadRequestError","param":null,"code":400}}\n\n';
        res.end([vllmChunk({ role: 'assistant', content: '' }), ...(hasResult ? [failure] : [vllmChunk({ content: '<tool_call>\n{"name": "note", "arguments": {"text": "x"}}\n</tool_call>' }), vllmChunk({ content: '' }, 'stop')]), DONE].join(''));
      },
      { tools: toolMap(answeringTool('note', () => 'noted')) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'take a note' }] });
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ message: expect.stringMatching(/^engine fell over \(in round 2, /), type: 'server_error', code: 'upstream_response_error' });
  });
});

describe('an answer the upstream aborted (finish_reason "abort")', () => {
  it('is a failure, not a finished answer read as stop: 502 server_error, streamed or not', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hel' }), vllmChunk({}, 'abort'), DONE].join(''));
    });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ type: 'server_error', code: 'upstream_response_error', message: expect.stringContaining('finish_reason "abort"') });
    const streamed = await streamChat(gw.url, { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(streamed.chunks.flatMap((c) => c.choices?.map((choice) => choice.finish_reason) ?? [])).not.toContain('stop');
    expect(streamed.chunks.filter((c) => c.error).map((c) => c.error!.code)).toEqual(['upstream_response_error']);
  });
});

describe('an upstream that is rate limiting', () => {
  it("passes its 429 on with its Retry-After, which the SDKs wait for, streamed or not", async () => {
    const gw = await scripted.start((_req, res) => void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end('{"error":{"message":"slow down"}}'));
    for (const stream of [false, true]) {
      const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, stream, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status, `stream ${stream}`).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
    }
  });
});
