import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

// Regression: a pythonic list whose first call had a value that is no literal (`id=foo`) was
// malformed whole, so the good call after it never ran. Now only that call is malformed (the
// parser's `malformed` with its id, then its text), and the gateway goes on with the next call.
const scripted = scriptedGateway();
const LIST = "[lookup(id=foo), get_weather(city='Paris')]";
const clientTools = ['lookup', 'get_weather'].map((name) => ({ type: 'function', function: { name } }));
const body = { model: MODEL, tool_parser: 'pythonic', messages: [{ role: 'user', content: 'weather?' }], tools: clientTools };

/** One round of model text, in the given deltas. */
function reply(res: ServerResponse, deltas: string[]): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((content) => vllmChunk({ content })), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

const hasObservation = (request: unknown) => (request as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');

describe('a pythonic list with one bad call among good ones, through the gateway', () => {
  it('answers the good call as tool_calls and the bad one as content', async () => {
    const gw = await scripted.start((_req, res) => reply(res, [LIST]));
    const res = await postJson(gw.url, '/v1/chat/completions', body);
    const choice = res.json.choices[0];
    // A call of the list ran: only the bad call's own text is content, not the list's "[".
    expect(choice.message.content).toBe('lookup(id=foo)');
    expect(choice.message.tool_calls.map((c: { function: unknown }) => c.function)).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(choice.finish_reason).toBe('tool_calls');
  });

  it('streams the good call whole after the bad one, however the list is split', async () => {
    const gw = await scripted.start((_req, res) => reply(res, LIST.split(/(?<=[(,)=])/)));
    const streamed = await streamChat(gw.url, body);
    expect(streamed.content).toBe('lookup(id=foo)');
    const deltas = streamed.chunks.flatMap((c) => c.choices.flatMap((choice) => (choice.delta as { tool_calls?: Array<{ index: number; function: { name?: string; arguments?: string } }> }).tool_calls ?? []));
    // (The bad call's start was streamed before its value went bad: client-calls.ts sends a
    // client call at its start. The history the gateway keeps has only the good call.)
    const index = deltas.find((d) => d.function.name === 'get_weather')!.index;
    expect(deltas.filter((d) => d.index === index).map((d) => d.function.arguments ?? '').join('')).toBe('{"city":"Paris"}');
    expect(streamed.chunks.flatMap((c) => c.choices).find((c) => c.finish_reason)?.finish_reason).toBe('tool_calls');
    const messages = streamed.events.find((e) => e.type === 'response.messages')?.messages as Array<{ tool_calls?: Array<{ function: { name: string } }> }>;
    expect(messages[0]!.tool_calls!.map((c) => c.function.name)).toEqual(['get_weather']);
  });

  it('cancels a bad gateway call and runs the good one after it', async () => {
    const note = answeringTool('note', (args) => `noted ${String(args.text)}`);
    const gw = await scripted.start((_req, res, request) => reply(res, [hasObservation(request) ? 'Done.' : "[note(text=b'x'), note(text='y')]"]), { tools: toolMap(note) });
    const streamed = await streamChat(gw.url, { model: MODEL, tool_parser: 'pythonic', messages: [{ role: 'user', content: 'take notes' }] });
    const calls = streamed.events.filter((e) => e.type.startsWith('tool_call.'));
    expect(calls.map((e) => e.type)).toEqual(['tool_call.started', 'tool_call.cancelled', 'tool_call.started', 'tool_call.completed']);
    expect(calls[1]).toMatchObject({ call_id: calls[0]!.call_id, reason: expect.stringContaining('b-prefixed') });
    expect(calls[3]).toMatchObject({ call_id: calls[2]!.call_id, ok: true });
    expect(scripted.upstream.requests.at(-1)?.body).toMatchObject({ messages: expect.arrayContaining([expect.objectContaining({ role: 'tool', content: 'noted y' })]) });
    expect(streamed.content).toContain('Done.');
  });
});
