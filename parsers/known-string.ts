/**
 * `text`, known to V8's optimiser to be a string. Deltas arrive as strings of many internal
 * representations (one- or two-byte, internalized, cons, sliced); once a function has seen more
 * than four, its inline caches for `text.length`, `text.slice`, `text.charCodeAt`… turn
 * megamorphic and each such access becomes a generic lookup. `"" + text` returns `text` itself at
 * no cost, but its result is typed as a string, so those accesses compile to direct string
 * operations whatever the caches saw. Used at the top of the per-delta functions (measured:
 * deepseek-v31 1.2× faster in bench/parsers).
 */
export function knownString(text: string): string {
  return '' + text;
}
