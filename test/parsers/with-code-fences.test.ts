import { describe, expect, it } from 'vitest';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent, type ToolCallParser } from '../../parsers/parser-events.ts';
import { withCodeFences } from '../../parsers/with-code-fences.ts';
import { expectWellFormedCalls } from './format-test-kit.ts';

const make = () => withCodeFences(createParser('hermes', { callIdPrefix: 'j' }), { callIdPrefix: 'f' });
const run = (deltas: string[]): ParserEvent[] => {
  const p = make();
  return coalesceText([...deltas.flatMap((d) => p.push(d)), ...p.end()]);
};

describe('withCodeFences', () => {
  const text =
    'Running it:\n```python\nprint(1)\n```\n<tool_call>{"name": "search", "arguments": {"q": "```python\\nx\\n```"}}</tool_call> done';

  it('executes fences in prose and leaves fences inside JSON arguments alone', () => {
    const events = run([text]);
    const starts = events.filter((e) => e.type === 'call-start');
    expect(starts).toEqual([
      { type: 'call-start', callId: 'f1', name: 'python' },
      { type: 'call-start', callId: 'j1', name: 'search' },
    ]);
    const pythonEnd = events.find((e) => e.type === 'call-end' && e.callId === 'f1');
    expect(pythonEnd).toEqual({ type: 'call-end', callId: 'f1', args: { code: 'print(1)\n' } });
    expect(events.find((e) => e.type === 'call-end' && e.callId === 'j1')).toEqual({ type: 'call-end', callId: 'j1', args: { q: '```python\nx\n```' } });
  });

  it('is split-invariant like its parts', () => {
    const whole = run([text]);
    expect(run([...text])).toEqual(whole);
    for (let cut = 1; cut < text.length; cut += 7) expect(run([text.slice(0, cut), text.slice(cut)])).toEqual(whole);
  });
});

describe('withCodeFences: tool-call markers inside a fence', () => {
  const expectSplitInvariant = (input: string, whole: ParserEvent[]) => {
    expect(run([...input])).toEqual(whole);
    for (let cut = 1; cut < input.length; cut++) expect(run([input.slice(0, cut), input.slice(cut)])).toEqual(whole);
  };

  // Regression: the inner parser took the call out of the block's text, so the block ran
  // `print('')`, code the model never wrote, while a second call was open at the same time.
  it('a tool call inside a python block being run makes that block malformed, not code with the call cut out', () => {
    const input = "Run:\n```python\nprint('<tool_call>{\"name\": \"search\", \"arguments\": {}}</tool_call>')\nprint(1)\n```\n```python\nprint(2)\n```\n";
    const events = run([input]);
    expect(events).toEqual([
      { type: 'text', text: 'Run:\n```python\n' },
      { type: 'call-start', callId: 'f1', name: 'python' },
      { type: 'text', text: "print('" },
      { type: 'malformed', callId: 'f1', reason: 'a search tool call began inside the code block' },
      { type: 'call-start', callId: 'j1', name: 'search' },
      { type: 'call-args', callId: 'j1', text: '{}' },
      { type: 'call-end', callId: 'j1', args: {} },
      // The rest of the broken block is shown, not run; its closing fence opens nothing.
      { type: 'text', text: "')\nprint(1)\n```\n```python\n" },
      { type: 'call-start', callId: 'f2', name: 'python' },
      { type: 'text', text: 'print(2)\n' },
      { type: 'call-piece', callId: 'f2', piece: { kind: 'line', text: 'print(2)\n', lineNo: 1 } },
      { type: 'text', text: '```\n' },
      { type: 'call-end', callId: 'f2', args: { code: 'print(2)\n' } },
    ]);
    expectWellFormedCalls(events);
    expectSplitInvariant(input, events);
  });

  it('a tool call inside a fence that is not run stays a call, as in vLLM (models wrap calls in ```json)', () => {
    const input = 'Calling:\n```json\n<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>\n```\n';
    const events = run([input]);
    expect(events.filter((e) => e.type !== 'text' && e.type !== 'call-args' && e.type !== 'call-piece')).toEqual([
      { type: 'call-start', callId: 'j1', name: 'search' },
      { type: 'call-end', callId: 'j1', args: { q: 'x' } },
    ]);
    expectSplitInvariant(input, events);
  });
});

describe('withCodeFences: after end()', () => {
  // Regression: end() left a call the inner parser had not ended in the wrapper's set of open
  // calls: no event ever ended it, and a later push ran with the fences switched off by it
  // (its text passed through as if inside that call) instead of being refused.
  it('closes an inner call left open, refuses push and pushFast, and a second end() gives nothing', () => {
    const inner: ToolCallParser = {
      push: (delta) => (delta === 'call' ? [{ type: 'call-start', callId: 'x1', name: 'search' }] : [{ type: 'text', text: delta }]),
      end: () => [],
    };
    const parser = withCodeFences(inner, { callIdPrefix: 'f' });
    expect(parser.push('call')).toEqual([{ type: 'call-start', callId: 'x1', name: 'search' }]);
    const events = parser.end();
    expect(events).toEqual([{ type: 'malformed', callId: 'x1', reason: 'the output ended inside the call' }]);
    expectWellFormedCalls([{ type: 'call-start', callId: 'x1', name: 'search' }, ...events]);
    expect(() => parser.push('```python\nprint(1)\n')).toThrow('push() after end()');
    expect(() => parser.pushFast!('x')).toThrow('push() after end()');
    expect(parser.end()).toEqual([]);
  });

  it('ends a fence call and an inner call cut off by the end, once', () => {
    const parser = make();
    parser.push('```python\nprint(1)\n```\n<tool_call>{"name": "search", "arguments": {"q": ');
    expect(parser.end().filter((e) => e.type !== 'text')).toEqual([{ type: 'malformed', callId: 'j1', reason: expect.any(String) }]);
    expect(parser.end()).toEqual([]);
    expect(() => parser.push('x')).toThrow('push() after end()');
  });
});
