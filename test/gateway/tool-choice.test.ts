import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../gateway/server.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { pause, sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat, type ChatChunk } from '../support/sse-client.ts';

// Qwen models write hermes calls; Qwen3 also thinks first (config's default rules).
const QWEN = 'Qwen/Qwen2.5-7B-Instruct';
const QWEN3 = 'Qwen/Qwen3-8B';

const hermesCall = (name: string, args: Record<string, string>) =>
  `<tool_call>\n{"name": "${name}", "arguments": {${Object.entries(args).map(([k, v]) => `"${k}": "${v}"`).join(', ')}}}\n</tool_call>\n`;

/** A gateway tool: answers `found <q>`, and records each q. */
function lookupTool(calls: string[]): ToolPlugin {
  return answeringTool('lookup', (args) => {
    calls.push(String(args.q));
    return `found ${String(args.q)}`;
  });
}

const LOOKUP = { type: 'function', function: { name: 'lookup' } };
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

const scripted = scriptedGateway();

/** A scripted upstream (reply i answers request i, in a cycle) behind a real gateway with the given tools. */
function gatewayOver(replies: string[], tools: ToolPlugin[] = []): Promise<GatewayHandle> {
  return scripted.start(async (_req, res) => {
    const reply = replies[(scripted.upstream.requests.length - 1) % replies.length]!;
    sseHeaders(res);
    res.write(vllmChunk({ role: 'assistant', content: '' }));
    // A few tokens per write, as a decoding server sends them.
    for (let i = 0; i < reply.length; i += 12) {
      res.write(vllmChunk({ content: reply.slice(i, i + 12) }));
      await pause(1);
    }
    res.end(vllmChunk({ content: '' }, 'stop') + DONE);
  }, { tools: toolMap(...tools) });
}

const sentToolChoices = () => scripted.upstream.requests.map((r) => (r.body as { tool_choice?: unknown }).tool_choice);
const toolMessages = (index: number) => (scripted.upstream.requests[index]!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool');

describe('tool_choice that forces a call', () => {
  it.each([
    ['a named function', { type: 'function', function: { name: 'lookup' } }],
    ['"required"', 'required'],
  ])('%s is sent with the first round only; the round after the observation gets "auto"', async (_what, toolChoice) => {
    const calls: string[] = [];
    const gw = await gatewayOver([hermesCall('lookup', { q: 'conveyor' }), 'A conveyor moves things.'], [lookupTool(calls)]);
    const res = await postJson(gw.url, '/v1/chat/completions', { model: QWEN, tools: [LOOKUP], tool_choice: toolChoice, messages: [{ role: 'user', content: 'what is a conveyor?' }] });
    expect(res.status).toBe(200);
    expect(sentToolChoices()).toEqual([toolChoice, 'auto']);
    expect(calls).toEqual(['conveyor']);
    expect(toolMessages(1).map((m) => m.content)).toEqual(['found conveyor']);
    expect(res.json.choices[0].message.content).toContain('A conveyor moves things.');
    expect(res.json.conveyor.rounds).toBe(2);
  });

  it('"auto" and no tool_choice go to every round as the client sent them', async () => {
    const gw = await gatewayOver([hermesCall('lookup', { q: 'a' }), 'done'], [lookupTool([])]);
    await postJson(gw.url, '/v1/chat/completions', { model: QWEN, tools: [LOOKUP], tool_choice: 'auto', messages: [{ role: 'user', content: 'go' }] });
    await postJson(gw.url, '/v1/chat/completions', { model: QWEN, tools: [LOOKUP], messages: [{ role: 'user', content: 'go' }] });
    expect(sentToolChoices()).toEqual(['auto', 'auto', undefined, undefined]);
  });

  it('"auto" with no tools listed is accepted and not passed on (vLLM refuses it where it means nothing)', async () => {
    const gw = await gatewayOver(['just text'], [lookupTool([])]);
    const res = await postJson(gw.url, '/v1/chat/completions', { model: QWEN, tool_choice: 'auto', messages: [{ role: 'user', content: 'go' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe('just text');
    expect(scripted.upstream.requests[0]!.body).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['a function the request does not list', { model: QWEN, tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'lookup' } } }, 'not in tools (get_weather)'],
    ['"required" with no tools', { model: QWEN, tool_choice: 'required' }, 'the request lists none'],
    ['a named function with no tools', { model: QWEN, tool_choice: { type: 'function', function: { name: 'lookup' } } }, 'the request lists none (to force one of the gateway\'s tools, list it by name alone: "tools": [{"type": "function", "function": {"name": "lookup"}}])'],
    ['an unknown mode', { model: QWEN, tools: [WEATHER], tool_choice: 'always' }, ''],
  ])('refuses %s with a 400 naming tool_choice, before anything goes upstream', async (_what, body, message) => {
    const gw = await gatewayOver(['unused'], [lookupTool([])]);
    const res = await postJson(gw.url, '/v1/chat/completions', { ...body, messages: [{ role: 'user', content: 'go' }] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'tool_choice', code: 'invalid_request' });
    expect(res.json.error.message).toContain(message);
    expect(scripted.upstream.requests).toHaveLength(0);
  });
});

describe('tool_choice "none"', () => {
  it('runs no tool and recognises no call: what the model wrote is the answer, in one round', async () => {
    const calls: string[] = [];
    const reply = `Here: ${hermesCall('lookup', { q: 'x' })}`;
    const gw = await gatewayOver([reply, 'a second round'], [lookupTool(calls)]);
    const streamed = await streamChat(gw.url, { model: QWEN, tools: [LOOKUP], tool_choice: 'none', messages: [{ role: 'user', content: 'go' }] });
    expect(streamed.content).toBe(reply);
    expect(streamed.events).toEqual([]);
    expect(streamed.chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean)).toEqual(['stop']);
    expect(calls).toEqual([]);
    expect(sentToolChoices()).toEqual(['none']);
  });

  it('is what the deprecated function_call "none" asks for too, in a request with no tool_choice', async () => {
    const calls: string[] = [];
    const reply = `Here: ${hermesCall('lookup', { q: 'x' })}`;
    const gw = await gatewayOver([reply, 'a second round'], [lookupTool(calls)]);
    const functions = [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
    const res = await postJson(gw.url, '/v1/chat/completions', { model: QWEN, functions, function_call: 'none', messages: [{ role: 'user', content: 'go' }] });
    expect(res.json.choices[0].message.content).toBe(reply);
    expect(res.json.choices[0].finish_reason).toBe('stop');
    expect(calls).toEqual([]);
  });

  it("still separates a thinking model's reasoning from its answer", async () => {
    const gw = await gatewayOver([`<think>no tools allowed</think>${hermesCall('lookup', { q: 'x' })}`], [lookupTool([])]);
    const res = await postJson(gw.url, '/v1/chat/completions', { model: QWEN3, tools: [LOOKUP], tool_choice: 'none', messages: [{ role: 'user', content: 'go' }] });
    expect(res.json.choices[0].message.reasoning_content).toBe('no tools allowed');
    expect(res.json.choices[0].message.content).toBe(hermesCall('lookup', { q: 'x' }));
  });
});

const toolCallDeltas = (chunks: ChatChunk[]) =>
  chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta as { tool_calls?: Array<{ index: number; function?: { name?: string; arguments?: string } }> }).tool_calls ?? []));

describe('parallel_tool_calls: false', () => {
  const twoCalls = `${hermesCall('get_weather', { city: 'Paris' })}${hermesCall('get_weather', { city: 'Oslo' })}`;

  it('gives the client one call where the model wrote two, and forwards the flag (official openai client)', async () => {
    const gw = await gatewayOver([twoCalls]);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = (parallel?: boolean) =>
      client.chat.completions.create({
        model: QWEN,
        tools: [WEATHER as OpenAI.ChatCompletionTool],
        ...(parallel === undefined ? {} : { parallel_tool_calls: parallel }),
        messages: [{ role: 'user', content: 'weather in Paris and Oslo?' }],
      });
    const both = await ask();
    expect(both.choices[0]!.message.tool_calls?.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"city": "Paris"}', '{"city": "Oslo"}']);
    const one = await ask(false);
    expect(one.choices[0]!.finish_reason).toBe('tool_calls');
    expect(one.choices[0]!.message.tool_calls?.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"city": "Paris"}']);
    expect((scripted.upstream.requests[1]!.body as { parallel_tool_calls?: boolean }).parallel_tool_calls).toBe(false);
  });

  it('cuts the decode where the second call begins: a model that would never stop is not waited for', async () => {
    const gateway = await scripted.start(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      res.write(vllmChunk({ content: hermesCall('get_weather', { city: 'Paris' }) }));
      res.write(vllmChunk({ content: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "' }));
      // The second call's argument never ends.
      while (!res.destroyed && !res.socket?.destroyed) {
        res.write(vllmChunk({ content: 'Lo' }));
        await pause(10);
      }
    });
    const streamed = await streamChat(gateway.url, { model: QWEN, tools: [WEATHER], parallel_tool_calls: false, messages: [{ role: 'user', content: 'weather?' }] });
    expect(streamed.done).toBe(true);
    const deltas = toolCallDeltas(streamed.chunks);
    expect(new Set(deltas.map((d) => d.index))).toEqual(new Set([0]));
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"city": "Paris"}');
    expect(streamed.chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    await scripted.upstream.requestSocketClosed(0);
  });

  it.each([true, false])('runs one gateway call per round, the same with partial execution %s', async (partial) => {
    const calls: string[] = [];
    const gw = await gatewayOver([`${hermesCall('lookup', { q: 'first' })}${hermesCall('lookup', { q: 'second' })}`, 'answered'], [lookupTool(calls)]);
    const streamed = await streamChat(gw.url, { model: QWEN, tools: [LOOKUP], parallel_tool_calls: false, partial_execution: partial, messages: [{ role: 'user', content: 'go' }] });
    expect(calls).toEqual(['first']);
    expect(toolMessages(1).map((m) => m.content)).toEqual(['found first']);
    expect(streamed.events.filter((e) => e.type === 'round.finished').map((e) => e.finish_reason)).toEqual(['tool_calls', 'stop']);
    expect(streamed.content).toContain('answered');
    const timeline = await (await fetch(`${gw.url}/v1/requests/${streamed.requestId}/timeline`)).json();
    expect(timeline.events.filter((e: { type: string }) => e.type === 'abort').map((e: { detail: string }) => e.detail)).toEqual([
      'parallel_tool_calls is false: cut where a second call (lookup) began',
    ]);
  });
});

describe('maxToolCallsPerRound', () => {
  // A model caught in a loop of calls (a small model repeating itself) had every one run, and the
  // next round fed all their observations, until max_tokens ended the decode.
  it('cuts a round where one call more than the limit begins: the calls before run, the next round sees them', async () => {
    const calls: string[] = [];
    const loop = Array.from({ length: 50 }, (_, i) => hermesCall('lookup', { q: `q${i}` })).join('');
    const replies = [loop, 'answered'];
    const gw = await scripted.start(
      async (_req, res) => {
        const reply = replies[(scripted.upstream.requests.length - 1) % replies.length]!;
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: '' }));
        for (let i = 0; i < reply.length && !res.destroyed; i += 12) {
          res.write(vllmChunk({ content: reply.slice(i, i + 12) }));
          await pause(1);
        }
        res.end(vllmChunk({ content: '' }, 'stop') + DONE);
      },
      { tools: toolMap(lookupTool(calls)) },
      { maxToolCallsPerRound: 3 },
    );
    const streamed = await streamChat(gw.url, { model: QWEN, tools: [LOOKUP], messages: [{ role: 'user', content: 'go' }] });
    expect(calls).toEqual(['q0', 'q1', 'q2']);
    expect(toolMessages(1).map((m) => m.content)).toEqual(['found q0', 'found q1', 'found q2']);
    expect(streamed.events.filter((e) => e.type === 'round.finished').map((e) => e.finish_reason)).toEqual(['tool_calls', 'stop']);
    expect(streamed.content).toContain('answered');
    const timeline = await (await fetch(`${gw.url}/v1/requests/${streamed.requestId}/timeline`)).json();
    expect(timeline.events.filter((e: { type: string }) => e.type === 'abort').map((e: { detail: string }) => e.detail)).toEqual([
      'more than 3 tool calls in one round (maxToolCallsPerRound): cut where call 4 (lookup) began',
    ]);
    await scripted.upstream.requestSocketClosed(0);
  });

  it('hands the client no more calls than the limit either, with finish_reason tool_calls', async () => {
    const loop = Array.from({ length: 20 }, (_, i) => hermesCall('get_weather', { city: `c${i}` })).join('');
    const limited = await scripted.start(
      async (_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: '' }));
        res.end(vllmChunk({ content: loop }) + vllmChunk({ content: '' }, 'stop') + DONE);
      },
      {},
      { maxToolCallsPerRound: 2 },
    );
    const res = await postJson(limited.url, '/v1/chat/completions', { model: QWEN, tools: [WEATHER], messages: [{ role: 'user', content: 'weather?' }] });
    expect(res.json.choices[0].finish_reason).toBe('tool_calls');
    expect(res.json.choices[0].message.tool_calls.map((c: { function: { arguments: string } }) => c.function.arguments)).toEqual(['{"city": "c0"}', '{"city": "c1"}']);
  });
});
