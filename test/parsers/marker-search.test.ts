import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchMarkers, type MarkerSearch } from '../../parsers/marker-search.ts';

/** The search as it reads: every marker looked for in the whole text. */
function searchWhole(text: string, markers: readonly string[], final: boolean): MarkerSearch {
  let index = -1;
  let marker = '';
  for (const candidate of markers) {
    const at = text.indexOf(candidate);
    if (at >= 0 && (index < 0 || at < index || (at === index && candidate.length > marker.length))) [index, marker] = [at, candidate];
  }
  const partials = markers.map((m) => {
    for (let start = Math.max(0, text.length - m.length + 1); start < text.length; start++) if (m.startsWith(text.slice(start))) return start;
    return text.length;
  });
  const holdFrom = Math.min(text.length, ...partials);
  if (index >= 0 && (final || holdFrom > index)) return { found: true, index, marker };
  return { found: false, holdFrom };
}

describe('searchMarkers', () => {
  const markers = ['<tool_call>', '</tool_call>'];
  it('finds the earliest complete marker', () => {
    expect(searchMarkers('a </tool_call> <tool_call>', markers)).toEqual({ found: true, index: 2, marker: '</tool_call>' });
  });
  it('holds back a suffix that could still become a marker', () => {
    expect(searchMarkers('hello <tool_ca', markers)).toEqual({ found: false, holdFrom: 6 });
    expect(searchMarkers('hello <', markers)).toEqual({ found: false, holdFrom: 6 });
    expect(searchMarkers('hello </', markers)).toEqual({ found: false, holdFrom: 6 });
  });
  it('releases everything once no marker can start', () => {
    expect(searchMarkers('a < b', markers)).toEqual({ found: false, holdFrom: 5 });
    expect(searchMarkers('<tool_cab', markers)).toEqual({ found: false, holdFrom: 9 });
  });
  it('prefers the longest marker at the same index', () => {
    expect(searchMarkers('x[TOOL_CALLS]', ['[TOOL', '[TOOL_CALLS]'])).toEqual({ found: true, index: 1, marker: '[TOOL_CALLS]' });
  });
  it('before the end of the input, holds a marker that another one cut at the end may still contain', () => {
    // Whole, "a [PY]" finds "[PY]" at 2: with only "a [PY" so far, "[" at 2 is not yet the answer.
    expect(searchMarkers('a [PY', ['[', '[PY]'], false)).toEqual({ found: false, holdFrom: 2 });
    expect(searchMarkers('a [PY]', ['[', '[PY]'], false)).toEqual({ found: true, index: 2, marker: '[PY]' });
    expect(searchMarkers('a [PX', ['[', '[PY]'], false)).toEqual({ found: true, index: 2, marker: '[' });
    expect(searchMarkers('x\nEN', ['\n', '\nEND'], false)).toEqual({ found: false, holdFrom: 1 });
    // At the end of the input the complete marker is the answer.
    expect(searchMarkers('a [PY', ['[', '[PY]'])).toEqual({ found: true, index: 2, marker: '[' });
  });
  it('answers for a long text (searched in windows) as for a short one', () => {
    const markers = ['[TOOL_CALLS]', '[TOOL', '[ARGS]', '\nEND'];
    const piece = fc.constantFrom('x', ' ', '[', '[TOOL', '[TOOL_CALLS]', '[ARGS]', '\n', '\nEN', '\nEND', 'y'.repeat(1000));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.nat(20_000), fc.boolean(), (pieces, padding, final) => {
        const text = 'p'.repeat(padding) + pieces.join('');
        expect(searchMarkers(text, markers, final)).toEqual(searchWhole(text, markers, final));
      }),
      { numRuns: 500 },
    );
  });
});
