import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { toolFromPlugin } from '../../plugins/kit/tool-from-plugin.ts';
import type { ToolPlugin, Verdict } from '../../plugins/plugin-types.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Messages = Array<{ role: string; content: string | null }>;

/** Streams `pieces` as content deltas (Hermes markup for MODEL), `pauseMs` apart, then ends the stream unless the client left. */
async function streamPieces(res: ServerResponse, pieces: string[], pauseMs = 5): Promise<void> {
  sseHeaders(res);
  res.write(vllmChunk({ role: 'assistant', content: '' }));
  for (const piece of pieces) {
    if (res.destroyed) return;
    res.write(vllmChunk({ content: piece }));
    await sleep(pauseMs);
  }
  if (!res.destroyed) res.end([vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** A gateway tool that checks each field of its call with `judge` (a query guard) and answers "rows". */
function guardTool(judge: (piece: Piece) => Promise<Verdict>): ToolPlugin {
  return {
    name: 'guard',
    description: 'refuses writes',
    parameters: { type: 'object' },
    consumes: 'field',
    start: () => ({ piece: judge, end: async () => ({ ok: true, content: 'rows' }), abort: () => {} }),
  };
}

describe('a round cut short', () => {
  it('under validate_tool_arguments, a client call that failed never reaches the client; the retry is its only call, index 0', async () => {
    const gw = await scripted.start((_req, res, body) => {
      const observed = (body as { messages: Messages }).messages.some((m) => m.role === 'tool');
      const args = observed ? '{"city": "Paris"}' : '{"city": 5, "unit": "c"}';
      void streamPieces(res, ['<tool_call>\n{"name": "get_weather", "arguments": ', ...args.match(/.{1,4}/g)!, '}\n</tool_call>']);
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      validate_tool_arguments: true,
    });
    const indices: number[] = [];
    for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) indices.push(call.index);
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toHaveLength(1);
    expect(final.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city": "Paris"}' } });
    expect(new Set(indices)).toEqual(new Set([0]));
    // The model heard why round 1's call was refused.
    expect(scripted.upstream.requests).toHaveLength(2);
  });

  it("does not run a sibling call the model had not finished when another call's reject cut the round", async () => {
    let ran = 0;
    const calc = answeringTool('calc', () => String(++ran));
    // Rejects a DELETE query, but only after a while, as a plugin in another process would answer.
    const guard = guardTool(async (piece) => {
      await sleep(50);
      return piece.kind === 'field' && String(piece.value).startsWith('DELETE') ? { verdict: 'reject', reason: 'read-only' } : undefined;
    });
    const gw = await scripted.start(
      (_req, res, body) => {
        const observed = (body as { messages: Messages }).messages.some((m) => m.role === 'tool');
        if (observed) return void streamPieces(res, ['Nothing was deleted.']);
        void (async () => {
          sseHeaders(res);
          res.write(vllmChunk({ role: 'assistant', content: '' }));
          // calc begins before guard's verdict is in; the rest of it comes only if the gateway has
          // not cut the round (closing this stream) within 5 s. A fixed 400 ms left a slow machine
          // room to read the rest, and run calc, before the verdict.
          res.write(vllmChunk({ content: '<tool_call>\n{"name": "guard", "arguments": {"query": "DELETE FROM t"}}\n</tool_call>\n<tool_call>\n{"name": "calc", "arguments": {"expression": "2+2"' }));
          await Promise.race([once(res, 'close'), sleep(5000)]);
          if (res.destroyed) return;
          res.end([vllmChunk({ content: ', "precision": 2}}\n</tool_call>' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
        })();
      },
      { tools: toolMap(guard, calc) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'clean up' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content.trim()).toBe('Nothing was deleted.');
    expect(ran).toBe(0);
    const observations = res.json.conveyor.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);
    expect(observations).toEqual(['error: guard rejected the call: read-only', 'error: calc was not run: the round was cut short before the model finished writing this call']);
  });

  it("lets a client call already streaming end before a gateway tool's late reject cuts the decode: the client never holds half a call", async () => {
    // guard's verdict comes once the client has been sent the start of get_weather, as a check
    // that takes a process or database round trip can; the rest of the call comes well after.
    let releaseVerdict!: () => void;
    const verdictDue = new Promise<void>((resolve) => (releaseVerdict = resolve));
    const guard = guardTool(async (piece) => {
      if (piece.kind !== 'field') return undefined;
      await verdictDue;
      return { verdict: 'reject', reason: 'read-only' };
    });
    const gw = await scripted.start(
      (_req, res, body) => {
        const observed = (body as { messages: Messages }).messages.some((m) => m.role === 'tool');
        if (observed) return void streamPieces(res, ['Nothing was deleted.']);
        void (async () => {
          sseHeaders(res);
          res.write(vllmChunk({ role: 'assistant', content: '' }));
          res.write(vllmChunk({ content: '<tool_call>\n{"name": "guard", "arguments": {"query": "DELETE FROM t"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par' }));
          await sleep(100);
          releaseVerdict();
          // Time for the gateway to take the verdict before the rest comes: 1 s, wide for a slow
          // machine, which with 300 ms could read the rest, the second guard call too, first.
          await sleep(1000);
          if (res.destroyed) return;
          for (const piece of ['is", "unit": ', '"celsius"}}\n</tool_call>\n<tool_call>\n{"name": "guard", "arguments": {"query": "DROP t"}}\n</tool_call>']) {
            res.write(vllmChunk({ content: piece }));
            await sleep(5);
          }
          if (!res.destroyed) res.end([vllmChunk({ content: '' }, 'stop'), DONE].join(''));
        })();
      },
      { tools: toolMap(guard) },
    );
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'clean up, then the weather' }], tools: [weatherTool] });
    for await (const _ of stream);
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([expect.objectContaining({ function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "celsius"}' } })]);
    // Cut at the client call's end: the guard call after it was never decoded, and no round 2 was asked for.
    expect(scripted.upstream.requests).toHaveLength(1);
    const conveyor = (final as unknown as { conveyor: { messages: Array<{ role: string; content: string | null }> } }).conveyor;
    expect(conveyor.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['error: guard rejected the call: read-only']);
  });

  it('a ```python fence is the text it is when the request has no python tool', async () => {
    const gw = await scripted.start((_req, res) => void streamPieces(res, ['Run this:\n```python\n', 'print(1)\n', '```\n']));
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'code?' }] });
    expect(res.json.choices[0].finish_reason).toBe('stop');
    expect(res.json.choices[0].message.tool_calls).toBeUndefined();
    expect(res.json.choices[0].message.content).toBe('Run this:\n```python\nprint(1)\n```\n');
  });

  it('a request with many calls of a kit plugin leaves no listener behind on its signal (no MaxListenersExceededWarning)', async () => {
    const echo = toolFromPlugin(definePlugin({ name: 'echo', description: 'echoes', parameters: z.object({ n: z.number() }), consumes: 'call', hooks: { onEnd: (args) => ({ ok: true, content: String(args.n) }) } }));
    const calls = Array.from({ length: 15 }, (_, n) => `<tool_call>\n{"name": "echo", "arguments": {"n": ${n}}}\n</tool_call>\n`);
    const gw = await scripted.start(
      (_req, res, body) => {
        const observed = (body as { messages: Messages }).messages.some((m) => m.role === 'tool');
        void streamPieces(res, observed ? ['done'] : calls, 0);
      },
      { tools: toolMap(echo) },
    );
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'echo' }] });
      expect(streamed.events.filter((e) => e.type === 'tool_call.completed')).toHaveLength(15);
      await sleep(10);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
