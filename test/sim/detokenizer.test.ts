import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer } from '../../sim/incremental-detokenizer.ts';
import tokenizer from 'mistral-tokenizer-js';
import { encodeText, tokenBytes, tokenPiece } from '../../sim/mistral-tokenizer.ts';

function deltas(text: string): string[] {
  const detok = new IncrementalDetokenizer();
  return encodeText(text).map((id) => detok.push(id));
}

// A delta carries only whole characters: no lone surrogate, no replacement character that the
// input did not contain.
function isWholeCharacters(delta: string): boolean {
  return !/[\uD800-\uDFFF]/u.test(delta.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '')) && !delta.includes('\uFFFD');
}

describe('IncrementalDetokenizer over the Mistral tokenizer', () => {
  it('reproduces any text exactly when its deltas are concatenated, and never splits a character', () => {
    const unicodeText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(' ', '  ', '\n', '\t', '\u2581', 'é', '日本', '🎉', '𝔘', '\u{1F9EC}', 'a'), maxLength: 30 }),
    );
    fc.assert(
      fc.property(unicodeText, (text) => {
        fc.pre(!text.includes('\uFFFD'));
        const parts = deltas(text);
        expect(parts.join('')).toBe(text);
        for (const part of parts) expect(isWholeCharacters(part)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('keeps leading, doubled and trailing spaces (the ▁ marker) exactly', () => {
    for (const text of [' leading', 'double  space', 'trailing ', '   ', 'tab\tand\nnewline', 'literal \u2581 mark']) {
      expect(deltas(text).join('')).toBe(text);
    }
  });

  it('holds the bytes of a byte-fallback character and emits it whole with its last byte', () => {
    // U+1F9EC (DNA) has no vocabulary entry: it is spelled as four <0x..> byte tokens.
    const ids = encodeText('\u{1F9EC}');
    expect(ids.map((id) => tokenPiece(id))).toEqual(['<0xF0>', '<0x9F>', '<0xA7>', '<0xAC>']);
    const detok = new IncrementalDetokenizer();
    const out = ids.map((id) => [detok.push(id), detok.heldBytes]);
    expect(out).toEqual([
      ['', 1],
      ['', 2],
      ['', 3],
      ['\u{1F9EC}', 0],
    ]);
  });

  it('emits one vocabulary piece per token with ▁ turned into a space', () => {
    const ids = encodeText('Hello world');
    expect(ids.map((id) => tokenPiece(id))).toEqual(['Hello', '▁world']);
    expect(deltas('Hello world')).toEqual(['Hello', ' world']);
  });
});

describe('encodeText', () => {
  it('encodes a text once and hands the same ids to every later request for it', () => {
    const text = `A reply every request of a scenario streams again (${Math.random()}).`;
    const first = encodeText(text);
    expect(first.length).toBeGreaterThan(10);
    expect(encodeText(text)).toBe(first);
    expect(encodeText(`${text} `)).not.toBe(first);
  });

  it('gives the ids the encoder gives for the whole text at once, though it encodes word by word', () => {
    // Spaces in runs, at both ends, next to newlines, tabs, punctuation, code and non-Latin text.
    const alphabet = fc.constantFrom(' ', ' ', '  ', '\n', '\t', 'a', 'the', 'Hello', 'ing', '.', ',', '(', '{"x": 1}', '42', 'é', '日本', '\u{1F9EC}', '\u2581', 'def f():');
    let unique = 0;
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 60 }), (parts) => {
        const text = `${parts.join('')}${++unique}`; // past the whole-text cache
        const whole = text.includes('\u2581') ? null : (tokenizer.encode(text, false, false) ?? []);
        const ids = [...encodeText(text)];
        if (whole) expect(ids).toEqual(whole);
        expect(Buffer.concat(ids.map((id) => tokenBytes(id))).toString('utf8')).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
