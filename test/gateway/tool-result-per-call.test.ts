import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();

/** A round of Hermes text (MODEL reads as Hermes). */
function reply(res: ServerResponse, content: string): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

const hasObservation = (body: unknown) => (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
const call = (name: string) => `<tool_call>\n{"name": "${name}", "arguments": {}}\n</tool_call>\n`;

/**
 * A tool whose call ends only once `release` is called (or after a long fallback, so a gateway
 * that holds results back fails the order checks rather than hanging).
 */
function heldTool(name: string): { tool: ToolPlugin; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const fallback = setTimeout(release, 3000);
  released.then(() => clearTimeout(fallback), () => undefined);
  const tool: ToolPlugin = {
    name,
    description: `${name} (a test tool)`,
    parameters: { type: 'object' },
    consumes: 'call',
    start: () => ({ piece: () => undefined, end: async () => (await released, { ok: true, content: `${name} done` }), abort: () => release() }),
  };
  return { tool, release };
}

describe('tool_call.completed goes out as each call settles, not when the round does', () => {
  it('streams a quick call’s result while a slower sibling is still running', async () => {
    const slow = heldTool('slow');
    const quick = answeringTool('quick', () => 'quick done');
    const gw = await scripted.start((_req, res, body) => reply(res, hasObservation(body) ? 'Both done.' : call('slow') + call('quick')), { tools: toolMap(slow.tool, quick) });
    // The slow call ends only once the client holds the quick one's result: a gateway that sends a
    // round's results together sends the quick one only after the fallback, and after the slow one.
    const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'run both' }] }, (chunk) => {
      if (chunk.conveyor?.type === 'tool_call.completed' && chunk.conveyor.name === 'quick') slow.release();
    });
    const events = streamed.events.map((e) => (e.type === 'tool_call.completed' ? `${e.type}:${String(e.name)}` : e.type));
    expect(events.filter((e) => e !== 'tool_call.started' && !e.startsWith('response'))).toEqual(['round.started', 'tool_call.completed:quick', 'tool_call.completed:slow', 'round.finished', 'round.started', 'round.finished']);
    expect(streamed.content).toBe('Both done.');
    // The history keeps the calls' order, whichever finished first.
    const messages = streamed.events.find((e) => e.type === 'response.messages')?.messages as Array<{ role: string; content: string }>;
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['slow done', 'quick done']);
  });

  it('sends no result of a round whose request fails on a reject under on_tool_reject "error", once the reject is in', async () => {
    const slow = heldTool('slow');
    const rejecting: ToolPlugin = {
      name: 'picky',
      description: 'picky (a test tool)',
      parameters: { type: 'object' },
      consumes: 'field',
      start: () => ({ piece: () => ({ verdict: 'reject', reason: 'no such table' }), end: async () => ({ ok: true, content: 'never' }), abort: () => {} }),
    };
    const gw = await scripted.start((_req, res) => reply(res, call('slow') + '<tool_call>\n{"name": "picky", "arguments": {"table": "x"}}\n</tool_call>'), { tools: toolMap(slow.tool, rejecting) });
    const streamed = await streamChat(gw.url, { model: MODEL, on_tool_reject: 'error', messages: [{ role: 'user', content: 'go' }] });
    slow.release();
    expect(streamed.events.some((e) => e.type === 'tool_call.completed')).toBe(false);
    expect(streamed.chunks.at(-1)?.error).toMatchObject({ code: 'tool_rejected' });
  });
});
