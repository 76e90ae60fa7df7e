import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceJsonParse } from './reference-json.ts';

describe('referenceJsonParse (the JSON oracle of the parser tests)', () => {
  it('gives what JSON.parse gives for any JSON text, and refuses what it refuses', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(referenceJsonParse(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
    expect(() => referenceJsonParse('{"a": }')).toThrow(SyntaxError);
  });

  it("reads escaped keys right after a key of one backslash (V8's bug in Node 24 reads them as the backslash)", () => {
    JSON.parse('{"\\\\": 1}');
    const value = referenceJsonParse('{"a b": 1, "\\u00e9": 2, "\\n": {"\\"": 3}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a b', 'é', '\n']);
    expect(Object.keys(value['\n'] as object)).toEqual(['"']);
  });

  it('keeps "__proto__" an own property and the last of duplicate keys, as JSON.parse does', () => {
    const value = referenceJsonParse('{"__proto__": {"x": 1}, "a": 1, "a": 2}') as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(value)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value.a).toBe(2);
  });
});
