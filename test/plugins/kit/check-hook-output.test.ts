import { describe, expect, it } from 'vitest';
import { notJsonAt, progressOf, toolResultOf } from '../../../plugins/kit/check-hook-output.ts';

describe('notJsonAt: where a result\'s data stops being JSON', () => {
  it('names what and where', () => {
    const cycle: Record<string, unknown> = { a: { b: [] } };
    ((cycle['a'] as { b: unknown[] }).b).push(cycle['a']);
    expect(notJsonAt({ n: 10n }, 'data')).toBe('a BigInt at data.n');
    expect(notJsonAt({ 'a b': [0, () => 1] }, 'data')).toBe('a function at data["a b"][1]');
    expect(notJsonAt(cycle, 'data')).toBe('a cycle at data.a.b[0] (it contains itself)');
    expect(notJsonAt({ m: new Map([[1, 2]]) }, 'data')).toBe('a Map at data.m (JSON has no Map: use an object or an array)');
    expect(notJsonAt({ v: { toJSON: () => 5n } }, 'data')).toBe('a BigInt at data.v');
  });

  it('takes what JSON.stringify writes faithfully or by a documented rule', () => {
    const shared = { x: 1 };
    // A value two fields share is no cycle; a Date and a Buffer say what they are by toJSON; undefined fields are left out.
    expect(notJsonAt({ a: shared, b: [shared], d: new Date(0), buf: Buffer.from('hi'), u: undefined, nan: NaN, nul: null }, 'data')).toBeUndefined();
  });
});

describe('toolResultOf', () => {
  it('passes data on as its JSON, as every runtime sends it', () => {
    const result = { ok: true, content: 'x', data: { rows: [[1, 'a']], when: new Date(0) } };
    expect(toolResultOf('t', result)).toStrictEqual({ ok: true, content: 'x', data: { rows: [[1, 'a']], when: '1970-01-01T00:00:00.000Z' } });
  });
});

describe('progressOf', () => {
  it('passes a well-formed event on with its known fields only', () => {
    expect(progressOf('t', { type: 'unit-done', detail: 'row 1', extra: () => 1 })).toEqual({ progress: { type: 'unit-done', detail: 'row 1' } });
  });

  it('names what is wrong with any other', () => {
    const error = (value: unknown): string | undefined => {
      const checked = progressOf('t', value);
      return 'error' in checked ? checked.error.split(';')[0] : undefined;
    };
    expect(error(null)).toBe("error: t's ctx.emit(null) is not an object");
    expect(error({ type: 'output', stream: 'stdout' })).toBe("error: t's ctx.emit({ type: 'output', stream }) needs text, a string (got undefined)");
    expect(error({ type: 'unit-done', detail: 'x'.repeat(10_001) })).toBe("error: t's ctx.emit({ type: 'unit-done', detail }) has a detail of 10001 characters, over 10000");
    expect(error({ detail: 'x' })).toBe("error: t's ctx.emit({ detail }) needs type 'unit-done' or 'output' (got undefined)");
  });
});
