import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NdjsonLineSplitter } from '../../sandbox/python-ipc.ts';

/** `text` cut at `cuts` (positions, any order, repeats allowed). */
function chunksOf(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let start = 0;
  for (const cut of [...at, text.length]) {
    chunks.push(text.slice(start, cut));
    start = cut;
  }
  return chunks;
}

describe('NdjsonLineSplitter', () => {
  it('gives the complete lines of a stream however it is cut, and holds the unfinished one', () => {
    const text = fc.array(fc.constantFrom('a', 'b', '\n', '\u2028', '{', '"'), { maxLength: 60 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 10 }), (t, cuts) => {
        const splitter = new NdjsonLineSplitter();
        const lines = chunksOf(t, cuts).flatMap((chunk) => splitter.push(chunk));
        const whole = t.split('\n');
        expect(lines).toEqual(whole.slice(0, -1));
        // The unfinished line comes out once its newline arrives.
        expect(splitter.push('\n')).toEqual([whole.at(-1)]);
      }),
    );
  });

  it('joins a line read in many pieces', () => {
    const splitter = new NdjsonLineSplitter();
    const piece = 'x'.repeat(1000);
    for (let i = 0; i < 100; i++) expect(splitter.push(piece)).toEqual([]);
    expect(splitter.push('y\nz')).toEqual([`${piece.repeat(100)}y`]);
    expect(splitter.push('\n\n')).toEqual(['z', '']);
  });
});
