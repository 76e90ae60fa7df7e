import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { streamChat, type StreamedChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const note = answeringTool('note', () => 'noted');
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

/** A round of Hermes text (MODEL reads as Hermes), ending with `finish`. */
function reply(res: ServerResponse, content: string, finish = 'stop'): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, finish), DONE].join(''));
}

const hasObservation = (body: unknown) => (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');

/**
 * README's contract: every `tool_call.started` ends with exactly one terminal event
 * (`tool_call.completed` or `tool_call.cancelled`) of the same call and name, and no terminal
 * event comes without its start.
 */
function expectPaired(streamed: StreamedChat): void {
  const open = new Map<unknown, unknown>();
  const ended = new Set<unknown>();
  for (const e of streamed.events) {
    if (e.type === 'tool_call.started') {
      expect(open.has(e.call_id) || ended.has(e.call_id), `${String(e.call_id)} started twice`).toBe(false);
      open.set(e.call_id, e.name);
    } else if (e.type === 'tool_call.completed' || e.type === 'tool_call.cancelled') {
      expect(open.get(e.call_id), `${e.type} of ${String(e.call_id)} without its tool_call.started`).toBe(e.name);
      open.delete(e.call_id);
      ended.add(e.call_id);
    }
  }
  expect([...open.keys()], 'started and never ended').toEqual([]);
}

describe('tool_call events pair up: one start, one terminal event, per call', () => {
  it('pairs a gateway call that ran, started then completed', async () => {
    const gw = await scripted.start((_req, res, body) => reply(res, hasObservation(body) ? 'Noted.' : '<tool_call>\n{"name": "note", "arguments": {"text": "x"}}\n</tool_call>'), { tools: toolMap(note) });
    const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'take a note' }] });
    expect(streamed.events.filter((e) => e.type.startsWith('tool_call.')).map((e) => e.type)).toEqual(['tool_call.started', 'tool_call.completed']);
    expectPaired(streamed);
  });

  it('ends a gateway call that max_tokens cut with tool_call.cancelled, not a dangling start', async () => {
    // The decode ran out inside the call's arguments: it is not a call (README), and it has no observation.
    const gw = await scripted.start((_req, res) => reply(res, '<tool_call>\n{"name": "note", "arguments": {"text": "an unfinished', 'length'), { tools: toolMap(note) });
    const streamed = await streamChat(gw.url, { model: MODEL, max_tokens: 12, messages: [{ role: 'user', content: 'take a note' }] });
    expect(streamed.chunks.flatMap((c) => c.choices).find((c) => c.finish_reason)?.finish_reason).toBe('length');
    const started = streamed.events.find((e) => e.type === 'tool_call.started');
    expect(started).toMatchObject({ round: 1, name: 'note' });
    expect(streamed.events.find((e) => e.type === 'tool_call.cancelled')).toMatchObject({ round: 1, call_id: started?.call_id, name: 'note', reason: expect.any(String) });
    expect(streamed.events.some((e) => e.type === 'tool_call.completed')).toBe(false);
    expectPaired(streamed);
  });

  it('announces a client call that validate_tool_arguments refused with tool_call.started before its tool_call.completed', async () => {
    const gw = await scripted.start((_req, res, body) => reply(res, hasObservation(body) ? 'Which city?' : '<tool_call>\n{"name": "get_weather", "arguments": {"city": 5}}\n</tool_call>'));
    const streamed = await streamChat(gw.url, { model: MODEL, tools: [weather], validate_tool_arguments: true, messages: [{ role: 'user', content: 'weather?' }] });
    expect(streamed.content).toContain('Which city?');
    const calls = streamed.events.filter((e) => e.type.startsWith('tool_call.'));
    expect(calls).toEqual([
      { type: 'tool_call.started', t: expect.any(Number), round: 1, call_id: expect.any(String), name: 'get_weather' },
      expect.objectContaining({ type: 'tool_call.completed', round: 1, call_id: calls[0]?.call_id, name: 'get_weather', ok: false }),
    ]);
    // Never the client's to run: no tool_calls delta for it.
    expect(streamed.chunks.some((c) => c.choices.some((choice) => 'tool_calls' in choice.delta))).toBe(false);
    expectPaired(streamed);
  });
});
