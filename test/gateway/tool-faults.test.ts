import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

// A raw ToolPlugin (startConveyor({ tools }) takes them as they are, without the kit's guards) that
// throws where the kit's plugins never do: the fault is that call's, not the request's or the gateway's.

const scripted = scriptedGateway();
type Messages = Array<{ role: string; content: string | null; tool_call_id?: string }>;
const hermes = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>\n`;

function reply(res: ServerResponse, pieces: string[]): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), ...pieces.map((p) => vllmChunk({ content: p })), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

/** Round 1 calls `broken` and `lookup`; round 2 quotes the observations it was given. */
function twoCallsThenQuote(res: ServerResponse, body: unknown): void {
  const tools = (body as { messages: Messages }).messages.filter((m) => m.role === 'tool');
  reply(res, tools.length > 0 ? [`heard: ${tools.map((m) => m.content).join(' | ')}`] : [hermes('broken', { a: 1 }), hermes('lookup', { q: 'x' })]);
}

describe('a tool whose start hook throws', () => {
  it.each([true, false])('fails that call with a tool error and the request goes on (partial execution %s)', async (partial) => {
    const aborted: string[] = [];
    const broken: ToolPlugin = {
      name: 'broken',
      description: 'a plugin bug',
      parameters: { type: 'object' },
      consumes: 'call',
      start: () => {
        throw new Error('no sandbox for you');
      },
    };
    const lookup: ToolPlugin = {
      ...answeringTool('lookup', () => 'found x'),
      start: (ctx) => {
        const inner = answeringTool('lookup', () => 'found x').start(ctx);
        return { ...inner, abort: (reason) => aborted.push(reason) };
      },
    };
    const gw = await scripted.start((_req, res, body) => twoCallsThenQuote(res, body), { tools: toolMap(broken, lookup) });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, partial_execution: partial, messages: [{ role: 'user', content: 'go' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content.trim()).toBe('heard: error: broken failed: no sandbox for you | found x');
    expect(res.json.conveyor.rounds).toBe(2);
    expect(aborted).toEqual([]);
  });
});

describe('a tool whose abort hook throws', () => {
  it('still has its reject cut the decode, and the model hears the rejection', async () => {
    const guard: ToolPlugin = {
      name: 'guard',
      description: 'refuses writes',
      parameters: { type: 'object' },
      consumes: 'field',
      start: () => ({
        piece: (piece) => (piece.kind === 'field' && String(piece.value).startsWith('DELETE') ? { verdict: 'reject', reason: 'read-only' } : undefined),
        end: async () => ({ ok: true, content: 'rows' }),
        abort: () => {
          throw new Error('abort hook bug');
        },
      }),
    };
    const gw = await scripted.start(async (_req, res, body) => {
      const observed = (body as { messages: Messages }).messages.find((m) => m.role === 'tool');
      if (observed) return reply(res, [`heard: ${observed.content}`]);
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      res.write(vllmChunk({ content: '<tool_call>\n{"name": "guard", "arguments": {"sql": "DELETE FROM t", "more": "' }));
      // The model never finishes the call: only the reject ends this round.
      const timer = setInterval(() => res.write(vllmChunk({ content: 'x' })), 5);
      res.once('close', () => clearInterval(timer));
    }, { tools: toolMap(guard) });
    const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'go' }] });
    expect(streamed.done).toBe(true);
    expect(streamed.content).toContain('heard: error: guard rejected the call: read-only');
    await scripted.upstream.requestSocketClosed(0);
  });
});

describe('a tool that ignores its abort and never ends', () => {
  it('does not hold a request whose client has left: its place frees and the next request is served', async () => {
    const aborts: string[] = [];
    const stuck: ToolPlugin = {
      name: 'stuck',
      description: 'never answers',
      parameters: { type: 'object' },
      consumes: 'call',
      start: () => ({ piece: () => undefined, end: () => new Promise(() => {}), abort: (reason) => aborts.push(reason) }),
    };
    const gw = await scripted.start(
      (_req, res, body) => {
        const user = (body as { messages: Messages }).messages.at(-1)!.content;
        reply(res, user === 'go' ? [hermes('stuck', {})] : ['fine']);
      },
      { tools: toolMap(stuck) },
      { maxConcurrentRequests: 1, maxQueuedRequests: 1 },
    );
    const client = new AbortController();
    let requestId: string | undefined;
    const left = streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'go' }] }, (chunk) => (requestId = chunk.id), client.signal);
    // The client leaves once the decode is over and the round only waits for the tool.
    await eventually(async () => {
      if (requestId === undefined) return false;
      const { json } = await getJson(gw.url, `/v1/requests/${requestId}/timeline`);
      return (json.events as Array<{ type: string }>).some((e) => e.type === 'decode-end');
    }, 'the decode-end of round 1');
    client.abort();
    await expect(left).rejects.toThrow();
    // The one place is free again: the next request is admitted and answered.
    const next = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'again' }] });
    expect(next.status).toBe(200);
    expect(next.json.choices[0].message.content).toBe('fine');
    expect(aborts).toEqual(['client aborted']);
  });
});
