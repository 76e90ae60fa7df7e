import type { ToolResult } from '../plugins/plugin-types.ts';

/**
 * maxObservationChars by default. Counted in UTF-8 bytes as well as characters, it bounds the
 * observation's tokens too (no tokenizer gives a token less than a byte): at most 20,000, about
 * 5,000 for English prose, 10,000 for digits, well within a 32k context. In characters alone,
 * CJK text (one to three tokens a character) made 57,000.
 */
export const DEFAULT_MAX_OBSERVATION_CHARS = 20_000;

/**
 * A tool result as the model is shown it: content past `max` characters, or past `max` bytes of
 * UTF-8 (which holds for any text within `max` characters that is not ASCII), loses its middle, with a
 * line saying how much went. A script that prints 256 KiB (the sandbox's output limit) would
 * otherwise fill the next round's prompt past the model's context, and the upstream's 400
 * ("reduce the length of the input messages") would reach a client that sent one line. The
 * start (what a program printed first, a page's title) and the end (a traceback's last line, a
 * final result) are what a model reads an observation for. `data` is left whole: it goes to the
 * client, not into the prompt.
 */
export function capObservation(result: ToolResult, max: number): ToolResult {
  const content = result.content;
  // A UTF-16 unit is at most 3 bytes of UTF-8: short content needs no count.
  if (content.length * 3 <= max || (content.length <= max && Buffer.byteLength(content) <= max)) return result;
  // Content a larger cap already cut (cut again to fit the context, observation-fit.ts) loses its
  // middle around that cut: one note, counting all that went. Cut as any other text, the old note
  // went unsaid (the model was told of a fraction of the cut) or was itself cut in two.
  const earlier = earlierCut(content);
  const start = earlier?.start ?? content;
  const end = earlier?.end ?? content;
  const before = earlier?.count ?? 0;
  const note = (cut: number) => `\n[… ${cut.toLocaleString('en-US')} characters of this output cut …]\n`;
  // Room for the note (in bytes: its two ellipses are three each) with the longest count it could say; the count written is what went.
  const keep = Math.max(0, max - Buffer.byteLength(note(content.length + before)));
  // Bytes are never fewer than characters, so a byte budget keeps both within the limit.
  const head = headWithin(start, Math.ceil(keep / 2));
  const tailBytes = keep - Math.ceil(keep / 2);
  if (earlier === undefined) {
    const from = Math.max(head, tailFrom(content, tailBytes));
    return { ...result, content: `${content.slice(0, head)}${note(from - head)}${content.slice(from)}` };
  }
  const from = tailFrom(end, tailBytes);
  return { ...result, content: `${start.slice(0, head)}${note(before + start.length - head + from)}${end.slice(from)}` };
}

/** The note of an earlier cut, when `content` has exactly one: what stands either side of it, and the count it says. */
function earlierCut(content: string): { start: string; end: string; count: number } | undefined {
  const notes = [...content.matchAll(/\n\[… ([\d,]+) characters of this output cut …\]\n/g)];
  if (notes.length !== 1) return undefined;
  const [found] = notes as [RegExpExecArray];
  return { start: content.slice(0, found.index), end: content.slice(found.index + found[0].length), count: Number(found[1]!.replace(/,/g, '')) };
}

/** UTF-8 bytes of the code point `code`. */
function utf8Bytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** The end of the longest start of `text` within `bytes` of UTF-8, whole code points only. */
function headWithin(text: string, bytes: number): number {
  let at = 0;
  let used = 0;
  while (at < text.length) {
    const code = text.codePointAt(at)!;
    used += utf8Bytes(code);
    if (used > bytes) break;
    at += code > 0xffff ? 2 : 1;
  }
  return at;
}

/** The start of the longest end of `text` within `bytes` of UTF-8, whole code points only. */
function tailFrom(text: string, bytes: number): number {
  let at = text.length;
  let used = 0;
  while (at > 0) {
    const low = text.charCodeAt(at - 1);
    // A low surrogate after a high one ends a pair: the code point starts one unit earlier.
    const pair = at > 1 && low >= 0xdc00 && low <= 0xdfff && isHigh(text.charCodeAt(at - 2));
    const start = pair ? at - 2 : at - 1;
    used += utf8Bytes(text.codePointAt(start)!);
    if (used > bytes) break;
    at = start;
  }
  return at;
}

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
