import { describe, expect, it } from 'vitest';
import { searchMarkers } from '../../parsers/marker-search.ts';

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
});
