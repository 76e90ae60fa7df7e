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
});
