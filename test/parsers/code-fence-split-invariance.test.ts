import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import type { CodeFenceParserOptions } from '../../parsers/code-fence-parser.ts';
import { parseDeltas, parseWhole, textOf } from './parse-helpers.ts';

// Pieces of model output that exercise every rule: fences of both kinds and lengths, indents,
// info strings, CRLF, unicode line separators, astral characters and lone surrogates.
const fragments = [
  '```python\n', '```py\n', '```\n', '````\n', '````python\n', '~~~python\n', '~~~\n', '```js\n',
  '   ```python\n', '    ```python\n', '  ```\n', '``` \t\n', '```python title="x"\n', '```python',
  'x = 1\n', 'print("é😀")\n', 'if x:\n    y()\n', 's = """\n', '"""\n', 'Here is the code:\n',
  '\r\n', '\n', '\n\n', ' ', '\t', '`', '``', '~', 'python', 'text ', '😀', '👋🏽', '你好', '\u2028', '\r',
  '\uD83D', '\uDE00',
];

const modelOutput = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...fragments) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('`', '~', ' ', '\n', 'p', 'y', '\r'), maxLength: 8 }) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

const codeLine = fc.oneof(
  fc.constantFrom('x = 1', 'print("é😀")', '    return f(x)', '```', '``` python', '~~~', '"""', '', '  ```', '\u2028```'),
  fc.string({ unit: 'binary', maxLength: 10 }).map((t) => t.replace(/\n/g, '')),
);

/** Well-formed markdown: prose paragraphs and fenced blocks (closed or not), in any mix. */
const markdownDoc = fc
  .array(
    fc.oneof(
      fc.constantFrom('Here is the code:', 'The result is **4**.', '你好 👋', '', 'Use `x` here.'),
      fc
        .record({
          indent: fc.constantFrom('', ' ', '   ', '    '),
          char: fc.constantFrom('`', '~'),
          length: fc.integer({ min: 3, max: 5 }),
          info: fc.constantFrom('python', 'py', 'Python3', 'js', '', ' python x'),
          lines: fc.array(codeLine, { maxLength: 5 }),
          close: fc.constantFrom(-1, 0, 1, 2),
          eol: fc.constantFrom('\n', '\r\n'),
        })
        .map(({ indent, char, length, info, lines, close, eol }) => {
          const fence = char.repeat(length);
          const closer = close < 0 ? [] : [char.repeat(length + close - 1) + (close === 2 ? ' \t' : '')];
          return [`${indent}${fence}${info}`, ...lines, ...closer].join(eol);
        }),
    ),
    { maxLength: 8 },
  )
  .chain((blocks) => fc.constantFrom('', '\n').map((last) => blocks.join('\n') + last));

const anyOutput = fc.oneof(modelOutput, markdownDoc);

const options = fc.record({ bareFence: fc.boolean() }) as fc.Arbitrary<CodeFenceParserOptions>;

/** Cuts `text` into consecutive groups of the given sizes (cycled), in UTF-16 code units. */
function group(text: string, sizes: number[]): string[] {
  const out: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

const coalesced = (deltas: string[], opts: CodeFenceParserOptions) => coalesceText(parseDeltas(deltas, opts));

describe('code-fence parser split invariance', () => {
  it('one character per delta (splitting surrogate pairs) equals the whole text', () => {
    fc.assert(
      fc.property(anyOutput, options, (text, opts) => {
        expect(coalesced([...text.split('')], opts)).toEqual(parseWhole(text, opts));
      }),
      { numRuns: 300 },
    );
  });

  it('every 2-way split equals the whole text', () => {
    fc.assert(
      fc.property(anyOutput, options, (text, opts) => {
        const whole = parseWhole(text, opts);
        for (let cut = 0; cut <= text.length; cut++) {
          expect(coalesced([text.slice(0, cut), text.slice(cut)], opts)).toEqual(whole);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('random groupings of 1-8 characters, with empty deltas, equal the whole text', () => {
    fc.assert(
      fc.property(anyOutput, options, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 }), (text, opts, sizes) => {
        const deltas = group(text, sizes).flatMap((d) => [d, '']);
        expect(coalesced(deltas, opts)).toEqual(parseWhole(text, opts));
      }),
      { numRuns: 300 },
    );
  });

  it('never swallows text, and every call is well formed', () => {
    fc.assert(
      fc.property(anyOutput, options, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1 }), (text, opts, sizes) => {
        const events = parseDeltas(group(text, sizes), opts);
        expect(textOf(events)).toBe(text);
        checkCalls(events);
      }),
      { numRuns: 300 },
    );
  });

  it('emits no text event that splits a surrogate pair', () => {
    const wellFormed = anyOutput.filter((t) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(t));
    fc.assert(
      fc.property(wellFormed, (text) => {
        for (const e of parseDeltas(text.split(''))) {
          if (e.type === 'text') expect(e.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
        }
      }),
      { numRuns: 200 },
    );
  });
});

/** start, then pieces numbered 1..n whose texts concatenate to the code, then end; never nested. */
function checkCalls(events: ParserEvent[]): void {
  let open: { callId: string; code: string; lineNo: number } | undefined;
  for (const e of events) {
    if (e.type === 'call-start') {
      expect(open).toBeUndefined();
      open = { callId: e.callId, code: '', lineNo: 0 };
    } else if (e.type === 'call-piece') {
      expect(e.callId).toBe(open?.callId);
      expect(e.piece).toMatchObject({ kind: 'line', lineNo: open!.lineNo + 1 });
      if (e.piece.kind === 'line') open!.code += e.piece.text;
      open!.lineNo += 1;
    } else if (e.type === 'call-end') {
      expect(e.callId).toBe(open?.callId);
      expect(e.args).toEqual({ code: open!.code });
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}
