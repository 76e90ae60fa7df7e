import { describe, expect, it } from 'vitest';
import { RawText } from '../../parsers/formats/format-parser.ts';
import { readCallId, readName } from '../../parsers/formats/mistral-call-head.ts';

const nameHead = () => ({ raw: new RawText('[TOOL_CALLS]'), name: '' });

describe('mistral call head', () => {
  it('reads a name up to [ARGS], [CALL_ID] or the arguments\' "{", keeping the frame', () => {
    const a = nameHead();
    expect(readName('get_weather[ARGS]{', 0, a)).toEqual({ kind: 'args', at: 17 });
    expect([a.name, a.raw.text]).toEqual(['get_weather', '[TOOL_CALLS]get_weather[ARGS]']);
    const b = nameHead();
    expect(readName('f{"a": 1}', 0, b)).toEqual({ kind: 'args', at: 1 });
    expect(readName('f[CALL_ID]abc', 0, nameHead())).toEqual({ kind: 'call-id', at: 10 });
    expect(readName('f is prose', 0, nameHead())).toEqual({ kind: 'prose', at: 1 });
  });

  it('asks for more at the end of a delta, and holds a marker cut there', () => {
    const head = nameHead();
    expect(readName('get_', 0, head)).toEqual({ kind: 'more', at: 4 });
    expect(readName('weather[AR', 0, head)).toMatchObject({ kind: 'hold', at: 7 });
    expect(head.name).toBe('get_weather');
  });

  it('reads a call id up to [ARGS]; an overlong name or id is prose at the same character however split', () => {
    const id = { raw: new RawText(''), id: 0 };
    expect(readCallId('abc123[ARGS]', 0, id)).toEqual({ kind: 'args', at: 12 });
    expect(id.id).toBe(6);
    expect(readCallId('abc[x', 0, { raw: new RawText(''), id: 0 })).toEqual({ kind: 'prose', at: 3 });
    const long = 'n'.repeat(300);
    expect(readName(long, 0, nameHead())).toEqual({ kind: 'prose', at: 257 });
    const split = nameHead();
    expect(readName(long.slice(0, 200), 0, split).kind).toBe('more');
    expect(readName(long.slice(200), 0, split)).toEqual({ kind: 'prose', at: 57 });
  });
});
