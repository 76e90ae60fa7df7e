import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

describe("a tool author's `line` plugin and the ids of calls", () => {
  it('feeds a line plugin the lines of its own string argument as they are decoded, not only the python tool', async () => {
    const lines: string[] = [];
    const wordCount = inlineTool(
      definePlugin({
        name: 'word_count',
        description: 'Counts the words of a text, line by line',
        parameters: z.object({ text: z.string(), language: z.string().optional() }),
        consumes: 'line',
        lineField: 'text',
        hooks: {
          onPiece: (piece) => void (piece.kind === 'line' && lines.push(piece.text)),
          onEnd: ({ text }) => `${text.split(/\s+/).filter(Boolean).length} words`,
        },
      }),
    );
    expect(wordCount.lineField).toBe('text');
    const gw = await scripted.start(
      callThenAnswer({ name: 'word_count', arguments: { text: 'one two\nthree four five\nsix\n', language: 'en' } }, (observation) => `It has ${observation}.`),
      { tools: toolMap(wordCount) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'count' }] });
    expect(res.status).toBe(200);
    expect(lines).toEqual(['one two\n', 'three four five\n', 'six\n']);
    expect(res.json.choices[0].message.content).toBe('It has 6 words.');
  });

  it('does the same for a call the upstream parsed itself (delta.tool_calls)', async () => {
    const lines: string[] = [];
    const wordCount = inlineTool(
      definePlugin({
        name: 'word_count',
        description: 'Counts words',
        parameters: z.object({ text: z.string() }),
        consumes: 'line',
        hooks: { onPiece: (piece) => void (piece.kind === 'line' && lines.push(piece.text)), onEnd: ({ text }) => `${text.split(/\s+/).filter(Boolean).length} words` },
      }),
    );
    const args = JSON.stringify({ text: 'one two\nthree\n' });
    const gw = await scripted.start(
      (_req, res, body) => {
        sseHeaders(res);
        const observation = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
        const call = (fields: Record<string, unknown>) => vllmChunk({ tool_calls: [{ index: 0, ...fields }] });
        const chunks = observation
          ? [vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: `It has ${observation.content}.` }), vllmChunk({ content: '' }, 'stop')]
          : [vllmChunk({ role: 'assistant', content: '' }), call({ id: 'chatcmpl-tool-1', type: 'function', function: { name: 'word_count', arguments: '' } }), ...[args.slice(0, 15), args.slice(15)].map((a) => call({ function: { arguments: a } })), vllmChunk({}, 'tool_calls')];
        res.end([...chunks, DONE].join(''));
      },
      { tools: toolMap(wordCount) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'count' }] });
    expect(lines).toEqual(['one two\n', 'three\n']);
    expect(res.json.choices[0].message.content).toBe('It has 3 words.');
  });

  it('gives the calls of two requests different ids, so two turns of one conversation never share one', async () => {
    const echo = inlineTool(definePlugin({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
    const gw = await scripted.start(callThenAnswer({ name: 'echo', arguments: { text: 'hi' } }, (o) => o), { tools: toolMap(echo) });
    const ids: string[] = [];
    for (let turn = 0; turn < 2; turn++) {
      const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'again' }] });
      const id = res.json.conveyor.messages[0].tool_calls[0].id as string;
      expect(id).toMatch(/^call_[0-9a-f]{8}_r1_1$/);
      // Part of the request's own id, which the answer carries.
      expect(res.json.id.endsWith(id.slice('call_'.length, 'call_'.length + 8))).toBe(true);
      ids.push(id);
    }
    expect(ids[0]).not.toBe(ids[1]);
  });
});

describe('definePlugin and lineField', () => {
  it('takes the one string argument of a line plugin, and wants lineField where there are several', () => {
    const base = { name: 'lines', description: 'd', consumes: 'line' as const, hooks: { onEnd: () => 'ok' } };
    expect(inlineTool(definePlugin({ ...base, parameters: z.object({ code: z.string(), strict: z.boolean() }) })).lineField).toBe('code');
    expect(() => definePlugin({ ...base, parameters: z.object({ a: z.string(), b: z.string() }) })).toThrow(/consumes "line" needs lineField/);
    expect(() => definePlugin({ ...base, parameters: z.object({ a: z.string(), n: z.number() }), lineField: 'n' })).toThrow(/lineField "n" is not a string field of parameters/);
  });
});
