import { describe, expect, it } from 'vitest';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { withCodeFences } from '../../parsers/with-code-fences.ts';

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
