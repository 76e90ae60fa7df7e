import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { coalesceText, createParser } from '../../parsers/index.ts';
import { resolveParserFormat } from '../../parsers/format-names.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';
import { loadVectors, VECTOR_TOOL_PARSER, vectorTools, type ToolcallVector } from '../support/toolcall-vectors.ts';

const vectors = loadVectors();

/** What the parser alone makes of the vector: the gateway must deliver exactly this. */
function directParse(v: ToolcallVector) {
  const format = resolveParserFormat(VECTOR_TOOL_PARSER[v.format]!);
  const parser = createParser(format, (format === 'qwen3-coder' ? { toolDefinitions: vectorTools(v) } : {}) as never);
  const events = coalesceText([...parser.push(v.raw_text), ...parser.end()]);
  const calls = events.flatMap((e) => (e.type === 'call-end' ? [e.args] : []));
  const content = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
  // Every name the model calls, a malformed call's too: the client lists them (a call to a tool it does not list is refused).
  const names = [...new Set(events.flatMap((e) => (e.type === 'call-start' ? [e.name] : [])))];
  return { calls, content, names };
}

describe('tool-call vectors through the gateway (simulator replays each raw text)', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      // The vectors' calls (search, plan steps, get_weather…) are the client's here: only python runs in the gateway.
      plugins: { search: false, calculator: false, database: false, local_news: false, plan: false, http_get: false },
      sim: {
        profile: { name: 'vectors', description: 'fast', source: 'synthetic', decode: { baseMs: 1, perSeqMs: 0 }, prefill: { baseMs: 0, perTokenMs: 0 }, maxNumSeqs: 64, maxModelLen: 32768 },
        scenarios: vectors.map((v) => ({ name: `vec-${v.id}`, rules: [{ when: { explicit: true }, reply: v.raw_text }] })),
      },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('maps every vector family to a parser', () => {
    for (const v of vectors) expect(VECTOR_TOOL_PARSER[v.format], v.format).toBeDefined();
  });

  const clientSide = vectors.filter((v) => v.format !== 'conveyor:python_code_block');

  it.each(clientSide.map((v) => [v.id, v] as const))('%s: non-streamed calls and content', async (_id, v) => {
    const direct = directParse(v);
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', request(v));
    expect(res.status).toBe(200);
    const message = res.json.choices[0].message;
    const calls = (message.tool_calls ?? []) as Array<{ function: { name: string; arguments: string } }>;
    expect(calls.map((c) => JSON.parse(c.function.arguments))).toEqual(direct.calls);
    if (v.expected && v.format !== 'llmcompiler:plan') {
      expect(calls.map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) }))).toEqual(v.expected);
    }
    expect(res.json.choices[0].finish_reason).toBe(calls.length ? 'tool_calls' : 'stop');
    expect(message.content ?? '').toBe(direct.content);
  });

  it.each(clientSide.map((v) => [v.id, v] as const))('%s: streamed tool_calls deltas concatenate to the same arguments', async (_id, v) => {
    const direct = directParse(v);
    const streamed = await streamChat(conveyor.gateway.url, request(v));
    const byIndex = new Map<number, { name: string; args: string }>();
    let finish: string | null = null;
    for (const chunk of streamed.chunks) {
      for (const choice of chunk.choices) {
        finish = choice.finish_reason ?? finish;
        for (const tc of (choice.delta as { tool_calls?: Array<{ index: number; function: { name?: string; arguments?: string } }> }).tool_calls ?? []) {
          const call = byIndex.get(tc.index) ?? { name: '', args: '' };
          call.name += tc.function.name ?? '';
          call.args += tc.function.arguments ?? '';
          byIndex.set(tc.index, call);
        }
      }
    }
    const calls = [...byIndex.values()];
    expect(streamed.content).toBe(direct.content);
    if (v.expected_error !== undefined) {
      // Arguments stream as the model writes them, so a call found malformed later may already
      // have sent fragments; the finish_reason (not tool_calls) and the released text say it failed.
      expect(direct.calls).toEqual([]);
      expect(finish).toBe('stop');
      return;
    }
    expect(calls.map((c) => JSON.parse(c.args))).toEqual(direct.calls);
    expect(finish).toBe(calls.length ? 'tool_calls' : 'stop');
  });

  it('conveyor-python-abort: the cell stops at the first exception and the observation says so', async () => {
    const v = vectors.find((x) => x.id === 'conveyor-python-abort')!;
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...request(v), max_tool_rounds: 1 });
    expect(res.status).toBe(200);
    const tool = res.json.conveyor.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toContain('ZeroDivisionError');
    expect(tool.content).not.toContain('never');
  });

  /** The `tools` the vector's client sends: typed from its schema where it has one, else the names its model calls. */
  function requestTools(v: ToolcallVector): { tools?: unknown[] } {
    const typed = vectorTools(v);
    if (typed) return { tools: typed };
    const { names } = directParse(v);
    return names.length === 0 ? {} : { tools: names.map((name) => ({ type: 'function', function: { name } })) };
  }

  function request(v: ToolcallVector) {
    return {
      model: SIM_MODEL,
      scenario: `vec-${v.id}`,
      tool_parser: VECTOR_TOOL_PARSER[v.format],
      messages: [{ role: 'user', content: `vector ${v.id}` }],
      ...requestTools(v),
    };
  }
});
