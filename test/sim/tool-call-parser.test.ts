import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutToolCalls, messageToolCalls, pythonJsonDumps, ToolCallsStream, type ReplyDelta } from '../../sim/mistral-tool-calls.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

const SEARCH_REPLY =
  '[TOOL_CALLS][{"name": "search", "arguments": {"query": "hello world Python"}}, {"name": "search", "arguments": {"query": "hello world C++"}}, {"name": "search", "arguments": {"query": "hello world Java"}}]';

/** What a client assembles from the deltas, as the openai client's stream helpers do. */
function assemble(deltas: ReplyDelta[]) {
  let content = '';
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const delta of deltas) {
    content += delta.content ?? '';
    for (const call of delta.tool_calls ?? []) {
      if (call.id !== undefined) {
        expect(call.index).toBe(calls.length); // announced once each, in order
        calls.push({ id: call.id, name: call.function.name!, arguments: '' });
      }
      expect(calls[call.index]).toBeDefined(); // never arguments before the announcement
      calls[call.index]!.arguments += call.function.arguments ?? '';
    }
  }
  return { content, calls };
}

/** `text` cut at the given offsets, as tokens would cut it. */
function split(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const to of [...at, text.length]) {
    pieces.push(text.slice(from, to));
    from = to;
  }
  return pieces;
}

describe('the Mistral tool-call layout and stream (vLLM --tool-call-parser mistral)', () => {
  it('finds each call and its arguments; text before the marker is content', () => {
    const layout = layoutToolCalls(`Let me look.\n${SEARCH_REPLY}`)!;
    expect(layout.markerAt).toBe('Let me look.\n'.length);
    expect(layout.calls.map((c) => [c.name, layout.text.slice(c.argsStart, c.argsEnd), c.argsJson])).toEqual([
      ['search', '{"query": "hello world Python"}', '{"query": "hello world Python"}'],
      ['search', '{"query": "hello world C++"}', '{"query": "hello world C++"}'],
      ['search', '{"query": "hello world Java"}', '{"query": "hello world Java"}'],
    ]);
  });

  it('leaves text without a valid call list alone (vLLM returns it as content)', () => {
    expect(layoutToolCalls('No calls here.')).toBeUndefined();
    expect(layoutToolCalls('[TOOL_CALLS] nothing')).toBeUndefined();
    expect(layoutToolCalls('[TOOL_CALLS][{"name": "search", "arguments": {"query": "cut')).toBeUndefined();
    expect(layoutToolCalls('[TOOL_CALLS][]')).toBeUndefined();
    expect(layoutToolCalls('[TOOL_CALLS][{"arguments": {}}]')).toBeUndefined();
    expect(messageToolCalls('plain')).toBeUndefined();
  });

  it('streams the same calls however the reply is cut into tokens', () => {
    const replies = [
      SEARCH_REPLY,
      `Sure — two calls: ${SEARCH_REPLY.replace('hello world Java', 'caf\\u00e9 \\"quoted\\" }] 日本')}`,
      '[TOOL_CALLS] [ {"arguments": {"expression": "200*701", "nested": [1, {"a": "]}"}]}, "name": "calculator"} ]',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...replies), fc.array(fc.nat(400), { maxLength: 40 }), (reply, cuts) => {
        const layout = layoutToolCalls(reply)!;
        const stream = new ToolCallsStream(layout);
        const deltas = split(reply, cuts).map((piece) => stream.push(piece)).filter((d) => d !== undefined);
        const { content, calls } = assemble(deltas);
        expect(content).toBe(reply.slice(0, layout.markerAt));
        expect(calls.map((c) => [c.name, c.arguments])).toEqual(layout.calls.map((c) => [c.name, reply.slice(c.argsStart, c.argsEnd)]));
        for (const call of calls) expect(call.id).toMatch(/^[A-Za-z0-9]{9}$/);
        expect(stream.called).toBe(true);
      }),
    );
  });

  it('writes non-streamed arguments as Python json.dumps does', () => {
    expect(pythonJsonDumps({ a: [1, { b: 'é' }], c: null, d: true })).toBe('{"a": [1, {"b": "é"}], "c": null, "d": true}');
    const found = messageToolCalls('[TOOL_CALLS][{"name":"calculator","arguments":{"expression":"200*701"}}]')!;
    expect(found.content).toBeNull();
    expect(found.toolCalls).toEqual([{ id: expect.stringMatching(/^[A-Za-z0-9]{9}$/), type: 'function', function: { name: 'calculator', arguments: '{"expression": "200*701"}' } }]);
  });
});

describe('a simulator started with toolCallParser: "mistral", through the official openai client', () => {
  let parsing: SimHandle;
  let plain: SimHandle;
  const tools = [{ type: 'function' as const, function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
  const messages = [{ role: 'user' as const, content: 'Show me hello world programs in Python, C++ and Java.' }];
  const client = (sim: SimHandle) => new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });

  beforeAll(async () => {
    [parsing, plain] = await Promise.all([startSim({ profile: 'fast-test', toolCallParser: 'mistral' }), startSim({ profile: 'fast-test' })]);
  });
  afterAll(() => Promise.all([parsing?.close(), plain?.close()]));

  it('streams the calls as delta.tool_calls, arguments token by token, finish_reason tool_calls', async () => {
    const stream = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools, stream: true });
    const deltas: ReplyDelta[] = [];
    const finishes: Array<string | null> = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0]!;
      finishes.push(choice.finish_reason);
      deltas.push({ ...(choice.delta.content ? { content: choice.delta.content } : {}), ...(choice.delta.tool_calls ? { tool_calls: choice.delta.tool_calls as ReplyDelta['tool_calls'] } : {}) });
    }
    const { content, calls } = assemble(deltas);
    expect(content).toBe('');
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['search', { query: 'hello world Python' }],
      ['search', { query: 'hello world C++' }],
      ['search', { query: 'hello world Java' }],
    ]);
    // Several argument deltas per call: the query arrives as it is decoded, not at the end.
    expect(deltas.filter((d) => d.tool_calls?.some((c) => c.index === 0 && c.function.arguments)).length).toBeGreaterThan(3);
    expect(finishes.at(-1)).toBe('tool_calls');
    expect(finishes.slice(0, -1).every((f) => f === null)).toBe(true);
  });

  it('answers a non-streamed request with message.tool_calls and no content', async () => {
    const completion = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls!.map((c) => (c.type === 'function' ? c.function.arguments : ''))).toEqual([
      '{"query": "hello world Python"}',
      '{"query": "hello world C++"}',
      '{"query": "hello world Java"}',
    ]);
  });

  it('ends with finish_reason "stop", not "tool_calls", for a named tool_choice, streamed and not (vLLM serving_chat)', async () => {
    const named = { type: 'function' as const, function: { name: 'search' } };
    const whole = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools, tool_choice: named });
    expect(whole.choices[0]!.finish_reason).toBe('stop');
    expect(whole.choices[0]!.message.tool_calls).toHaveLength(3);

    const stream = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools, tool_choice: named, stream: true });
    const finishes: Array<string | null> = [];
    let calls = 0;
    for await (const chunk of stream) {
      finishes.push(chunk.choices[0]!.finish_reason);
      calls += chunk.choices[0]!.delta.tool_calls?.filter((c) => c.id !== undefined).length ?? 0;
    }
    expect(calls).toBe(3);
    expect(finishes.filter((f) => f !== null)).toEqual(['stop']);
    // "required" still ends with tool_calls.
    const required = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools, tool_choice: 'required' });
    expect(required.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('leaves the text as written without tools, with tool_choice "none", or without the parser', async () => {
    const asText = async (sim: SimHandle, extra: Record<string, unknown>) => {
      const completion = await client(sim).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, ...extra });
      return [completion.choices[0]!.finish_reason, completion.choices[0]!.message.content?.slice(0, 20), completion.choices[0]!.message.tool_calls];
    };
    const text = ['stop', '[TOOL_CALLS][{"name"', []];
    expect(await asText(parsing, {})).toEqual(text);
    expect(await asText(parsing, { tools, tool_choice: 'none' })).toEqual(text);
    expect(await asText(plain, { tools })).toEqual(text);
  });

  it('returns a list cut short by max_tokens as content, finish_reason length, when not streamed', async () => {
    const completion = await client(parsing).chat.completions.create({ model: 'mistral-7b-instruct-sim', messages, tools, max_tokens: 20 });
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.message.content).toMatch(/^\[TOOL_CALLS\]\[\{"name"/);
    expect(completion.choices[0]!.message.tool_calls).toEqual([]);
  });
});
