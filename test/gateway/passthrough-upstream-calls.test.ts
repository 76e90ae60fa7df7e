import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

type ToolCallDelta = { index: number; id?: string; function?: { name?: string; arguments?: string } };

// Regression: `tool_parser: "none"` read no call from the text, but a call the upstream parsed
// itself (vLLM with --enable-auto-tool-choice: delta.tool_calls) still went to the gateway's tool
// and ran, and the model was prompted again with its result; the README's pass-through runs no
// tool. The upstream's calls now reach the client as it sent them, as without the gateway.
describe('tool_parser "none" in front of an upstream that parses tool calls itself', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ sim: { toolCallParser: 'mistral' } });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const request = {
    model: SIM_MODEL,
    scenario: 'calculator',
    tool_parser: 'none',
    tools: [{ type: 'function', function: { name: 'calculator' } }],
    messages: [{ role: 'user', content: 'What is 200*701?' }],
  };

  it('runs no gateway tool: the call is the answer, as the upstream wrote it', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', request);
    expect(res.status).toBe(200);
    // One round, whose one turn is the call for the client: no tool's result.
    expect(res.json.conveyor.rounds).toBe(1);
    expect(res.json.conveyor.messages.map((m: { role: string }) => m.role)).toEqual(['assistant']);
    expect(res.json.choices[0].finish_reason).toBe('tool_calls');
    const calls = res.json.choices[0].message.tool_calls as Array<{ function: { name: string; arguments: string } }>;
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([['calculator', { expression: '200*701' }]]);
  });

  it('streams the call as tool_calls deltas, with no tool event', async () => {
    const streamed = await streamChat(conveyor.gateway.url, request);
    // Only the turns, on the finish chunk, as for any call of the client's: every chunk has its choice.
    expect(streamed.events.map((e) => e.type)).toEqual(['response.messages']);
    expect(streamed.chunks.every((c) => c.choices.length === 1)).toBe(true);
    const deltas = streamed.chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta as { tool_calls?: ToolCallDelta[] }).tool_calls ?? []));
    expect(deltas[0]?.function?.name).toBe('calculator');
    expect(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''))).toEqual({ expression: '200*701' });
    expect(streamed.chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((r) => r !== null)).toEqual(['tool_calls']);
  });
});

const scripted = scriptedGateway();

describe('tool_parser "none" and a call the upstream parsed to a name the request does not list', () => {
  // It too is the model's output passed on: refused and re-prompted, as the gateway answers such a
  // call when it reads calls itself, the pass-through decided what the model would say instead.
  it('passes it to the client as the upstream sent it, in one round', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      const call = { tool_calls: [{ index: 0, id: 'chatcmpl-tool-1', type: 'function', function: { name: 'lookup', arguments: '{"q": "x"}' } }] };
      const reply = scripted.upstream.requests.length === 1 ? [vllmChunk(call), vllmChunk({}, 'tool_calls')] : [vllmChunk({ content: 'made up' }), vllmChunk({}, 'stop')];
      res.end([vllmChunk({ role: 'assistant', content: '' }), ...reply, DONE].join(''));
    });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tool_parser: 'none', messages: [{ role: 'user', content: 'look x up' }] });
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(1);
    expect(res.json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [{ type: 'function', function: { name: 'lookup', arguments: '{"q": "x"}' } }] } });
  });
});
