import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../gateway/chat-request-schema.ts';
import { undeclaredToolCheck } from '../../gateway/undeclared-tools.ts';
import { DONE, MODEL, toolCallStream, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const calculator = answeringTool('calculator', () => '5');
const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
/** A model that calls get_weather until it hears back, then answers with what it heard. */
const callsWeather = callThenAnswer({ name: 'get_weather', arguments: { city: 'Paris' } }, (o) => `heard: ${o}`);

describe('undeclaredToolCheck', () => {
  it('refuses a name neither the gateway nor the request offers, and lists those it does', () => {
    const request = (fields: Record<string, unknown>) => ({ model: MODEL, messages: [{ role: 'user' as const, content: 'hi' }], ...fields }) as ChatRequest;
    const check = undeclaredToolCheck(request({ tools: [{ type: 'function', function: { name: 'lookup' } }] }), toolMap(calculator))!;
    expect(check('lookup')).toBeUndefined();
    expect(check('calculator')).toBeUndefined();
    expect(check('get_weather')).toBe('there is no tool named "get_weather" in this request (its tools are calculator, lookup)');
    expect(undeclaredToolCheck(request({}), new Map())!('x')).toBe('there is no tool named "x" in this request (it has none)');
    // OpenAI's deprecated function calling declares its functions apart.
    expect(undeclaredToolCheck(request({ functions: [{ name: 'get_weather', parameters: {} }] }), new Map())!('get_weather')).toBeUndefined();
    // Another type of tool names itself in ways not read here: any call may be the client's.
    expect(undeclaredToolCheck(request({ tools: [{ type: 'custom' }] }), new Map())).toBeUndefined();
    // Hundreds of tools: the refusal lists twenty.
    const many = undeclaredToolCheck(request({ tools: Array.from({ length: 300 }, (_, i) => ({ type: 'function', function: { name: `t${String(i).padStart(3, '0')}` } })) }), new Map())!;
    expect(many('x')).toMatch(/its tools are t000, t001, .*, t019 and 280 more\)$/);
  });
});

describe('a call to a tool the request does not have', () => {
  it('never reaches the client: the gateway refuses it as it is decoded, and the model answers again', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'weather in paris' }] });
    expect(answer.status).toBe(200);
    const choice = answer.json.choices[0];
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.tool_calls).toBeUndefined();
    expect(choice.message.content).toBe('heard: error: there is no tool named "get_weather" in this request (its tools are calculator)');
    // The refused call and its answer are in the turns the response adds, as any tool round's.
    const [call, observation] = answer.json.conveyor.messages;
    expect(call.tool_calls[0].function.name).toBe('get_weather');
    expect(observation).toMatchObject({ role: 'tool', tool_call_id: call.tool_calls[0].id });
    // The model heard it in the next round.
    expect(scripted.upstream.requests).toHaveLength(2);
  });

  it('streamed, leaves the stream as OpenAI\'s: no extension chunk, every chunk with its choice, the refusal only in the turns', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'weather in paris' }] });
    let content = '';
    let last: OpenAI.ChatCompletionChunk | undefined;
    for await (const chunk of stream) {
      // OpenAI's examples read choices[0] of every chunk.
      const choice = chunk.choices[0]!;
      content += choice.delta.content ?? '';
      expect(choice.delta.tool_calls).toBeUndefined();
      last = chunk;
    }
    expect(content).toBe('heard: error: there is no tool named "get_weather" in this request (its tools are calculator)');
    expect(last?.choices[0]?.finish_reason).toBe('stop');
    const turns = (last as unknown as { conveyor: { type: string; messages: Array<{ role: string }> } }).conveyor;
    expect(turns.type).toBe('response.messages');
    expect(turns.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
  });

  it('fails the request with tool_rejected under on_tool_reject "error", naming the tool the model made up', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const refused = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, on_tool_reject: 'error', messages: [{ role: 'user', content: 'weather in paris' }] });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('tool_rejected');
    expect(refused.json.error.message).toBe('the model called a tool this request does not have: there is no tool named "get_weather" in this request (its tools are calculator)');
  });

  it('is the client\'s once the request declares it: streamed as tool_calls, every chunk with its choice', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, tools: [weatherTool as OpenAI.ChatCompletionTool], messages: [{ role: 'user', content: 'weather in paris' }] });
    let args = '';
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      // A loop as OpenAI's examples write it: it reads choices[0] of every chunk.
      const choice = chunk.choices[0]!;
      for (const call of choice.delta.tool_calls ?? []) {
        name ??= call.function?.name;
        args += call.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
    expect(scripted.upstream.requests).toHaveLength(1);
  });

  it('is the text of a format whose calls all go to one tool, when no one offers that tool (a plan without a plan tool), as a fence without python is', async () => {
    const plan = '1. search("cheetah")\n2. join()<END_OF_PLAN>';
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: plan }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    }, { tools: toolMap(calculator) });
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tool_parser: 'llmcompiler-plan', messages: [{ role: 'user', content: 'plan it' }] });
    expect(answer.json.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: plan } });
    expect(scripted.upstream.requests).toHaveLength(1);
  });

  it('is refused too when the upstream parsed it (delta.tool_calls, vLLM with --enable-auto-tool-choice)', async () => {
    const gw = await scripted.start((_req, res, body) => {
      sseHeaders(res);
      const heard = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
      res.end(heard ? [vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: `heard: ${heard.content}` }), vllmChunk({ content: '' }, 'stop'), DONE].join('') : toolCallStream);
    }, { tools: toolMap(calculator) });
    // The request lists a tool, not the one the upstream's parser found a call to.
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tools: [{ type: 'function', function: { name: 'lookup' } }], messages: [{ role: 'user', content: 'weather in paris' }] });
    expect(answer.json.choices[0].message.tool_calls).toBeUndefined();
    expect(answer.json.choices[0].message.content).toBe('heard: error: there is no tool named "get_weather" in this request (its tools are calculator, lookup)');
  });

  it('under parallel_tool_calls: false, a second call is cut where it begins, declared or not; a first undeclared one is refused', async () => {
    const twoCalls = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "made_up", "arguments": {}}\n</tool_call>';
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: twoCalls }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    }, { tools: toolMap(calculator) });
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, parallel_tool_calls: false, tools: [weatherTool], messages: [{ role: 'user', content: 'weather' }] });
    expect(answer.json.choices[0].finish_reason).toBe('tool_calls');
    expect(answer.json.choices[0].message.tool_calls.map((c: { function: { name: string } }) => c.function.name)).toEqual(['get_weather']);
    expect(scripted.upstream.requests).toHaveLength(1);
  });
});
