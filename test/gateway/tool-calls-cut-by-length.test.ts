import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk, vllmUsage } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/**
 * vLLM with --enable-auto-tool-choice cut by max_tokens inside a call: the call's fragments so far,
 * then finish_reason "tool_calls" (it relabels any decode its parser found a call in), and usage
 * at the limit.
 */
function cutUpstream(argumentFragments: string[], completionTokens: number) {
  return (_req: unknown, res: ServerResponse) => {
    sseHeaders(res);
    const call = (fields: Record<string, unknown>) => vllmChunk({ tool_calls: [{ index: 0, ...fields }] });
    res.end(
      [
        vllmChunk({ role: 'assistant', content: '' }),
        vllmChunk({ content: 'Let me check.' }),
        call({ id: 'chatcmpl-tool-1', type: 'function', function: { name: 'get_weather', arguments: '' } }),
        ...argumentFragments.map((a) => call({ function: { arguments: a } })),
        vllmChunk({}, 'tool_calls'),
        vllmUsage(20, completionTokens),
        DONE,
      ].join(''),
    );
  };
}

const ask = (extra: Record<string, unknown> = {}) => ({ model: MODEL, max_tokens: 6, tools: [weather], messages: [{ role: 'user', content: 'weather in paris' }], ...extra });

describe('an upstream-parsed tool call that max_tokens cut', () => {
  it('answers finish_reason "length" and no call, whether its arguments were partial or had not begun', async () => {
    for (const fragments of [[], ['{"city": "']]) {
      const gw = await scripted.start(cutUpstream(fragments, 6));
      const res = await postJson(gw.url, '/v1/chat/completions', ask());
      expect(res.status).toBe(200);
      expect(res.json.choices[0].finish_reason, JSON.stringify(fragments)).toBe('length');
      expect(res.json.choices[0].message.tool_calls, JSON.stringify(fragments)).toBeUndefined();
      expect(res.json.choices[0].message.content).toBe('Let me check.');

      const streamed = await streamChat(gw.url, ask({ stream: true }));
      const finish = streamed.chunks.flatMap((c) => c.choices).find((c) => c.finish_reason)?.finish_reason;
      expect(finish, JSON.stringify(fragments)).toBe('length');
    }
  });

  it('keeps a call that finished within the budget as tool_calls', async () => {
    const gw = await scripted.start(cutUpstream(['{"city": "Paris"}'], 5));
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.json.choices[0].finish_reason).toBe('tool_calls');
    expect(res.json.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city": "Paris"}' });
  });
});

describe('a ```python block that max_tokens cut', () => {
  /** A `python` tool that records what reached it: statements as their lines complete, then its end or its abort. */
  function recordingPython(log: string[]): ToolPlugin {
    return {
      name: 'python',
      description: 'python (a test tool)',
      parameters: { type: 'object' },
      consumes: 'line',
      start: () => ({
        piece: (piece) => void (piece.kind === 'line' && log.push(`line ${piece.text.trim()}`)),
        end: async () => {
          log.push('end');
          return { ok: true, content: 'ran' };
        },
        abort: (reason) => void log.push(`abort ${reason}`),
      }),
    };
  }
  const cutFence = (_req: unknown, res: ServerResponse) => {
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Here:\n```python\nx = 1\ny = [x *' }), vllmChunk({}, 'length'), vllmUsage(20, 12), DONE].join(''));
  };

  it('is cut by a stop string the same way (vLLM names it in stop_reason); a block the output simply ended inside still runs', async () => {
    const ending = (stopReason: string | null) => (_req: unknown, res: ServerResponse) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Here:\n```python\nx = 1\ny = 2' }), vllmChunk({}, 'stop', {}, stopReason), vllmUsage(20, 12), DONE].join(''));
    };
    const ask = { model: MODEL, stop: ['END'], messages: [{ role: 'user', content: 'compute' }] };
    const cut: string[] = [];
    let gw = await scripted.start(ending('END'), { tools: toolMap(recordingPython(cut)) });
    expect((await postJson(gw.url, '/v1/chat/completions', ask)).json.conveyor.messages).toEqual([]);
    expect(cut).toEqual(['line x = 1', 'abort truncated call']);

    const ended: string[] = [];
    gw = await scripted.start(ending(null), { tools: toolMap(recordingPython(ended)) });
    expect((await postJson(gw.url, '/v1/chat/completions', { ...ask, max_tool_rounds: 1 })).json.conveyor.messages).toHaveLength(2);
    expect(ended).toEqual(['line x = 1', 'line y = 2', 'end']);
  });

  it('is no call: its complete statements ran as they came, its half statement never runs, and no tool result is made', async () => {
    const log: string[] = [];
    const gw = await scripted.start(cutFence, { tools: toolMap(recordingPython(log)) });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, max_tokens: 12, messages: [{ role: 'user', content: 'compute' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].finish_reason).toBe('length');
    expect(res.json.choices[0].message.content).toBe('Here:\n```python\nx = 1\ny = [x *');
    expect(res.json.conveyor.messages).toEqual([]);
    expect(log).toEqual(['line x = 1', 'abort truncated call']);

    const streamed = await streamChat(gw.url, { model: MODEL, max_tokens: 12, stream: true, messages: [{ role: 'user', content: 'compute' }] });
    const events = streamed.chunks.map((c) => (c as { conveyor?: { type: string; reason?: string } }).conveyor).filter((e) => e?.type.startsWith('tool_call.'));
    expect(events.map((e) => e!.type)).toEqual(['tool_call.started', 'tool_call.cancelled']);
    expect(events[1]!.reason).toBe('truncated call');
  });
});
