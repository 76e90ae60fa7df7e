import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalJsonScanner, type IncrementalJsonScannerOptions, type JsonScanEvent } from '../../parsers/json/incremental-json-scanner.ts';
import { groupBy, groupings, jsonStyle, jsonValue, toJson } from './json-call-arbitraries.ts';
import { referenceJsonParse } from '../support/reference-json.ts';

/** Scans `deltas` until the value is done or fails; returns the events and the scanner. */
function scan(deltas: readonly string[], options?: IncrementalJsonScannerOptions) {
  const scanner = new IncrementalJsonScanner(options);
  const events: JsonScanEvent[] = [];
  for (const delta of deltas) {
    scanner.write(delta);
    events.push(...scanner.takeEvents());
  }
  events.push(...scanner.end());
  return { scanner, events };
}

const withoutFragments = (events: JsonScanEvent[]) => events.filter((e) => e.type !== 'fragment');

describe('incremental JSON scanner', () => {
  it('reports each value where it closes, at any depth, with its path and offset', () => {
    const text = '{"a": [1, true, null, {}], "s": "x", "n": -2.5e1}';
    const { events } = scan([text]);
    expect(events).toEqual([
      { type: 'field', path: ['a', 0], value: 1, at: 8 },
      { type: 'field', path: ['a', 1], value: true, at: 14 },
      { type: 'field', path: ['a', 2], value: null, at: 20 },
      { type: 'field', path: ['a', 3], value: {}, at: 24 },
      { type: 'field', path: ['a'], value: [1, true, null, {}], at: 25 },
      { type: 'field', path: ['s'], value: 'x', at: 35 },
      { type: 'field', path: ['n'], value: -25, at: 48 },
      { type: 'done', value: { a: [1, true, null, {}], s: 'x', n: -25 }, at: 49 },
    ]);
    // A number is certain only at the character after it: "at" points at that delimiter.
    expect(text[48]).toBe('}');
  });

  it('completes a top-level number only at end()', () => {
    const scanner = new IncrementalJsonScanner();
    scanner.write('12');
    expect(scanner.takeEvents()).toEqual([]);
    expect(scanner.end()).toEqual([{ type: 'done', value: 12, at: 2 }]);
  });

  it('stops after the top-level value so the caller sees what follows', () => {
    const scanner = new IncrementalJsonScanner();
    expect(scanner.write('{"a": 1}</tool_call>')).toBe(8);
    expect(scanner.done).toBe(true);
    expect(scanner.write('more')).toBe(0);
  });

  it('decodes every escape, surrogate pairs included, like JSON.parse', () => {
    const text = String.raw`"\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \uD834\uDD1E \udc00"`;
    const { scanner } = scan(text.split(''));
    expect(scanner.value).toBe(JSON.parse(text));
  });

  it('fails at the first impossible character, with its offset', () => {
    for (const [text, at, reason] of [
      ['{"a": 1,}', 8, 'unexpected "}", expected a key'],
      ['{"a": "\\x"}', 8, 'invalid escape "\\x"'],
      ['{"a": "\\u12g4"}', 11, 'invalid \\u escape'],
      ['[1 2]', 3, 'unexpected "2", expected "," or "]"'],
      ['{"a": 01}', 7, 'unexpected "1", expected "," or "}"'],
      ['{"a": tru }', 9, 'unexpected " ", expected "true"'],
      ['{"a": -}', 7, 'unexpected "}", expected a digit'],
      ['{"a": 1.}', 8, 'unexpected "}", expected a digit'],
      ['"a\nb"', 2, 'control character in string'],
      ['{"a" 1}', 5, 'unexpected "1", expected ":"'],
      ['[', 1, 'truncated JSON'],
      ['', 0, 'no JSON value'],
    ] as const) {
      for (const deltas of [[text], text.split('')]) {
        const { scanner, events } = scan(deltas);
        expect(scanner.failed).toBe(true);
        expect(scanner.error).toEqual({ reason, at });
        expect(events.at(-1)).toEqual({ type: 'error', reason, at });
      }
    }
  });

  it('streams a configured string field as lines, each as soon as its \\n escape completes', () => {
    const scanner = new IncrementalJsonScanner({ linePaths: [['code']] });
    scanner.write('{"code": "import x\\');
    expect(scanner.takeEvents()).toEqual([]);
    scanner.write('nprint(1)\\u000a\\n');
    expect(scanner.takeEvents()).toEqual([
      { type: 'line', path: ['code'], text: 'import x\n', lineNo: 1, at: 20 },
      { type: 'line', path: ['code'], text: 'print(1)\n', lineNo: 2, at: 34 },
      { type: 'line', path: ['code'], text: '\n', lineNo: 3, at: 36 },
    ]);
    scanner.write('last"}');
    expect(scanner.takeEvents().slice(0, 2)).toEqual([
      { type: 'line', path: ['code'], text: 'last', lineNo: 4, at: 41 },
      { type: 'field', path: ['code'], value: 'import x\nprint(1)\n\nlast', at: 41 },
    ]);
  });

  it('streams string fragments that never split a surrogate pair', () => {
    const { events } = scan(['["ab😀', '\uD83D', '\uDE00c"]'], { fragments: true });
    expect(events.filter((e) => e.type === 'fragment').map((e) => e.type === 'fragment' && e.text)).toEqual(['ab😀', '😀c']);
  });

  it('honours maxFieldDepth, containerFields, keyDepth and openDepth', () => {
    const text = '{"a": {"b": [1]}, "c": 2}';
    const types = (options: IncrementalJsonScannerOptions) => scan([text], options).events.map((e) => `${e.type}:${'path' in e ? e.path.join('.') : ''}`);
    expect(types({ maxFieldDepth: 1 })).toEqual(['field:a', 'field:c', 'done:']);
    expect(types({ containerFields: false })).toEqual(['field:a.b.0', 'field:c', 'done:']);
    expect(types({ keyDepth: 1, openDepth: 1, maxFieldDepth: 0 })).toEqual(['open:', 'key:a', 'open:a', 'key:c', 'open:c', 'done:']);
  });

  it('keeps "__proto__" an own property, as JSON.parse does', () => {
    const { scanner } = scan(['{"__proto__": {"polluted": true}}']);
    expect(Object.getPrototypeOf(scanner.value)).toBe(Object.prototype);
    expect(scanner.value).toEqual(JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('bounds nesting', () => {
    const { scanner } = scan(['['.repeat(300)], { maxNesting: 256 });
    expect(scanner.error).toEqual({ reason: 'nested deeper than 256', at: 256 });
  });
});

describe('incremental JSON scanner: properties', () => {
  it('agrees with JSON.parse on any JSON text, however it is split, with identical events', () => {
    fc.assert(
      fc.property(fc.oneof(jsonValue, fc.jsonValue()), jsonStyle, groupings, (value, style, sizes) => {
        const text = toJson(value, style);
        const whole = scan([text], { linePaths: [['code']] });
        expect(whole.scanner.done).toBe(true);
        expect(whole.scanner.value).toEqual(referenceJsonParse(text));
        expect(whole.scanner.offset).toBe(text.length);
        for (const deltas of [groupBy(text, sizes), text.split('')]) {
          expect(withoutFragments(scan(deltas, { linePaths: [['code']] }).events)).toEqual(whole.events);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('accepts exactly what JSON.parse accepts, failing at the same offset under any split', () => {
    const jsonish = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', ' ', '\\', 'u', '0', '1', 'e', '-', '.', 't', 'r', 'n', 'a', 'x', '\n'), maxLength: 16 });
    fc.assert(
      fc.property(fc.oneof(jsonish, fc.jsonValue().map((v) => JSON.stringify(v))), groupings, (text, sizes) => {
        const { scanner } = scan([text]);
        const split = scan(groupBy(text, sizes)).scanner;
        let parsed: { ok: true; value: unknown } | { ok: false };
        try {
          parsed = { ok: true, value: referenceJsonParse(text) };
        } catch {
          parsed = { ok: false };
        }
        const acceptedWhole = scanner.done && text.slice(scanner.offset).trim() === '';
        expect(acceptedWhole).toBe(parsed.ok);
        if (parsed.ok) expect(scanner.value).toEqual(parsed.value);
        expect(split.done).toBe(scanner.done);
        expect(split.error).toEqual(scanner.error);
        expect(split.offset).toBe(scanner.offset);
      }),
      { numRuns: 400 },
    );
  });

  it('streams lines that concatenate to the string, with fragments concatenating to it too', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), groupings, (code, sizes) => {
        const text = JSON.stringify({ code });
        const { events } = scan(groupBy(text, sizes), { linePaths: [['code']], fragments: true });
        const lines = events.flatMap((e) => (e.type === 'line' ? [e.text] : []));
        expect(lines.join('')).toBe(code);
        expect(lines.slice(0, -1).every((l) => l.endsWith('\n'))).toBe(true);
        expect(events.flatMap((e) => (e.type === 'fragment' ? [e.text] : [])).join('')).toBe(code);
      }),
      { numRuns: 200 },
    );
  });
});
