import { knownString } from './known-string.ts';

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
 *
 * With `final` false (more text may follow), a complete marker is only an answer once no other
 * marker could still be completed at or before it: where one marker occurs inside another (`[` in
 * a wrapper token `[PY]`, "\n" in an end marker "\nEND"), text ending in `[PY` or "\nEN" is held
 * from there, since its next character decides which marker it is; the same text whole would
 * find the longer one. Omitted (or true), the earliest complete marker is the answer, as at the
 * end of the input.
 */
export function searchMarkers(text: string, markers: readonly string[], final = true): MarkerSearch {
  text = knownString(text);
  // The best so far in two locals, not an object: this runs on every delta that may hold a marker.
  let index = -1;
  let marker = '';
  // A long text (one large delta, a held candidate read again) is searched in windows that double:
  // a parser calls this again after each marker it finds, and a marker absent from the text was
  // looked for to its end every time, quadratic in the text's length.
  for (let window = LONG_TEXT; ; window *= 2) {
    const whole = window >= text.length;
    // Long enough that every marker starting before `window` is whole in it.
    const part = whole ? text : text.slice(0, window + longest(markers) - 1);
    for (let k = 0; k < markers.length; k++) {
      const candidate = markers[k]!;
      const at = part.indexOf(candidate);
      if (at < 0) continue;
      if (index < 0 || at < index || (at === index && candidate.length > marker.length)) {
        index = at;
        marker = candidate;
      }
    }
    // One starting at or past `window` may come after one cut at the window's end.
    if (whole || (index >= 0 && index < window)) break;
    index = -1;
    marker = '';
  }
  let holdFrom = text.length;
  if (index >= 0) {
    if (final) return { found: true, index, marker };
    // A marker cut at the end of the text that starts at or before the complete one contains it.
    for (let k = 0; k < markers.length; k++) {
      const start = partialMarkerStart(text, markers[k]!);
      if (start < holdFrom) holdFrom = start;
    }
    return holdFrom <= index ? { found: false, holdFrom } : { found: true, index, marker };
  }
  for (let k = 0; k < markers.length; k++) {
    const start = partialMarkerStart(text, markers[k]!);
    if (start < holdFrom) holdFrom = start;
  }
  return { found: false, holdFrom };
}

/** Texts up to this long are searched whole (every delta of a stream). */
export const LONG_TEXT = 4096;

function longest(markers: readonly string[]): number {
  let n = 0;
  for (let k = 0; k < markers.length; k++) if (markers[k]!.length > n) n = markers[k]!.length;
  return n;
}

/**
 * Where the longest suffix of `text` that is a proper prefix of `marker` begins (text.length if
 * none). Compares characters in place: this runs on most deltas of some formats, and building a
 * prefix string per candidate length to call endsWith on was their main cost (bench/parsers).
 */
function partialMarkerStart(text: string, marker: string): number {
  marker = knownString(marker);
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

/**
 * A fixed list of markers, with what the per-delta search needs worked out once: the distinct
 * characters the markers start with (one indexOf each, not one per marker: harmony's five end
 * tokens all start with "<").
 */
export class MarkerSet {
  readonly list: readonly string[];
  /**
   * Whether a marker occurs inside a proper prefix of another (`a` in `ab`): then text that is
   * only the start of a marker may hold a whole one, and FormatParser.holdMarkerStart does not
   * apply.
   */
  readonly nested: boolean;
  readonly #firsts: readonly string[];

  constructor(list: readonly string[]) {
    this.list = list;
    const firsts: string[] = [];
    for (const marker of list) if (!firsts.includes(marker[0]!)) firsts.push(marker[0]!);
    this.#firsts = firsts;
    this.nested = list.some((outer) => list.some((inner) => outer.slice(0, -1).includes(inner)));
  }

  /** Whether a marker, or the start of one, may be in `text`; false is certain. */
  mayStartIn(text: string): boolean {
    text = knownString(text);
    const firsts = this.#firsts;
    for (let k = 0; k < firsts.length; k++) if (text.indexOf(firsts[k]!) !== -1) return true;
    return false;
  }

  /** Whether `text` is a proper prefix of one of the markers (the start of one, not all of it). */
  startsMarker(text: string): boolean {
    text = knownString(text);
    const list = this.list;
    for (let k = 0; k < list.length; k++) {
      const marker = list[k]!;
      if (marker.length > text.length && marker.startsWith(text)) return true;
    }
    return false;
  }
}
