import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, vllmChunk, vllmUsage } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
type Messages = Array<{ role: string; content: string | null }>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Refuses a DELETE after a round trip (a plugin in another process): its verdict comes once the
 * round's last chunks, its finish_reason and usage, have been read. `given` resolves once it has.
 */
function slowGuard(): { tool: ToolPlugin; given: Promise<void> } {
  let verdictGiven!: () => void;
  const given = new Promise<void>((resolve) => (verdictGiven = resolve));
  const tool: ToolPlugin = {
    name: 'guard',
    description: 'refuses writes',
    parameters: { type: 'object' },
    consumes: 'field',
    start: () => ({
      piece: async (piece) => {
        if (piece.kind !== 'field' || !String(piece.value).startsWith('DELETE')) return undefined;
        await sleep(50);
        setImmediate(verdictGiven);
        return { verdict: 'reject', reason: 'read-only' };
      },
      end: async () => ({ ok: true, content: 'rows' }),
      abort: () => {},
    }),
  };
  return { tool, given };
}

/** Writes the whole round at once, its finish_reason and usage included; vLLM's [DONE] follows only once `until` resolves. */
function wholeRound(res: ServerResponse, deltas: Array<Record<string, unknown>>, finishReason: string, until: Promise<void>): void {
  sseHeaders(res);
  res.write([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((d) => vllmChunk(d)), vllmChunk({}, finishReason), vllmUsage(20, 9)].join(''));
  void until.then(() => res.end(DONE));
}

/** Hermes text whose last call the model leaves unclosed at its end, as vLLM's hermes parser accepts. */
const hermesRound = [{ content: '<tool_call>\n{"name": "guard", "arguments": {"sql": "DELETE FROM t"}}\n</tool_call>\n<tool_call>\n{"name": "lookup", "arguments": {"q": 1}}' }];
/** The same two calls parsed by the upstream (vLLM's --tool-call-parser): the last one ends only with the stream. */
const upstreamParsedRound = [
  { tool_calls: [{ index: 0, id: 'chatcmpl-tool-a', type: 'function', function: { name: 'guard', arguments: '{"sql": "DELETE FROM t"}' } }] },
  { tool_calls: [{ index: 1, id: 'chatcmpl-tool-b', type: 'function', function: { name: 'lookup', arguments: '{"q": 1}' } }] },
];

describe("a reject verdict that comes after the model's finish_reason", () => {
  it.each([
    ['from text', hermesRound, 'stop'],
    ['parsed by the upstream', upstreamParsedRound, 'tool_calls'],
  ] as const)('cuts nothing: the sibling the model wrote whole runs, and the round keeps its usage (%s)', async (_label, round, finishReason) => {
    let looked = 0;
    const lookup = answeringTool('lookup', () => `found ${++looked}`);
    const guard = slowGuard();
    const gw = await scripted.start(
      (_req, res, body) => {
        const observed = (body as { messages: Messages }).messages.some((m) => m.role === 'tool');
        if (observed) return wholeRound(res, [{ content: 'Nothing was deleted.' }], 'stop', Promise.resolve());
        wholeRound(res, [...round], finishReason, guard.given);
      },
      { tools: toolMap(guard.tool, lookup) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'clean up' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content.trim()).toBe('Nothing was deleted.');
    expect(looked).toBe(1);
    const observations = res.json.conveyor.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);
    expect(observations).toEqual(['error: guard rejected the call: read-only', 'found 1']);
    // Round 1 was not cut, so its usage chunk was read: both rounds count.
    expect(res.json.usage).toEqual({ prompt_tokens: 40, completion_tokens: 18, total_tokens: 58 });
  });
});
