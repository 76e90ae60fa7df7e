export type MarkerSearch =
  /** A complete marker starts at `index`. */
  | { found: true; index: number; marker: string }
  /** No complete marker; text from `holdFrom` on could still become one and must be held back. */
  | { found: false; holdFrom: number };

/**
 * Finds the earliest complete marker in `text`, or else where a possibly-partial marker begins.
 * This is how every format parser keeps a marker split across deltas (`<tool` + `_call>`) out of
 * the content, while releasing text the moment it can no longer be a marker.
 * When two markers start at the same index the longest wins (`<|python_tag|>` vs `<|p`).
 */
export function searchMarkers(text: string, markers: readonly string[]): MarkerSearch {
  let best: { index: number; marker: string } | undefined;
  for (const marker of markers) {
    const index = text.indexOf(marker);
    if (index < 0) continue;
    if (!best || index < best.index || (index === best.index && marker.length > best.marker.length)) best = { index, marker };
  }
  if (best) return { found: true, ...best };
  let holdFrom = text.length;
  for (const marker of markers) holdFrom = Math.min(holdFrom, partialMarkerStart(text, marker));
  return { found: false, holdFrom };
}

/**
 * Where the longest suffix of `text` that is a proper prefix of `marker` begins (text.length if
 * none). Compares characters in place: this runs on most deltas of some formats, and building a
 * prefix string per candidate length to call endsWith on was their main cost (bench/parsers).
 */
function partialMarkerStart(text: string, marker: string): number {
  const first = marker.charCodeAt(0);
  // The earliest start is the longest candidate suffix.
  for (let start = Math.max(0, text.length - (marker.length - 1)); start < text.length; start++) {
    if (text.charCodeAt(start) !== first) continue;
    let k = 1;
    while (start + k < text.length && text.charCodeAt(start + k) === marker.charCodeAt(k)) k++;
    if (start + k === text.length) return start;
  }
  return text.length;
}
