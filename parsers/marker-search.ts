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
  for (const marker of markers) {
    // The longest suffix of text that is a proper prefix of marker.
    for (let len = Math.min(marker.length - 1, text.length); len > 0; len--) {
      if (text.endsWith(marker.slice(0, len))) {
        holdFrom = Math.min(holdFrom, text.length - len);
        break;
      }
    }
  }
  return { found: false, holdFrom };
}
