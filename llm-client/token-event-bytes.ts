/**
 * vLLM's (and SGLang's) events for one token, read straight from the bytes of a socket read.
 *
 * Within a stream such an event is fixed text around one JSON string: `data: ` and the chunk's
 * start (id, created, model: the same for every token), the content string, then the chunk's
 * constant end and the blank line. On every token's path, decoding the whole read as UTF-8, the
 * SSE parser's line splitting and the string compare of the long start cost more of the gateway's
 * CPU than the rest of the decode; here they are a byte compare, a byte search and the decode of
 * the few bytes of content.
 *
 * The start and end are learned from the stream's first plain token chunk (tokenChunkStart,
 * tokenChoicesEnd), not assumed: SGLang's delta starts `{"role":null,"content":` and its chunks end
 * `,"matched_stop":null}],"usage":null}`; vLLM up to 0.10.1 ends one with `},"logprobs":null,"finish_reason":null}]}`, 0.10.2 on adds
 * `"token_ids":null` to every choice, a reasoning parser puts `"reasoning_content":null` in the
 * delta. A hard-coded end matched the simulator and missed every token of a real vLLM 0.11.
 *
 * With `continuous_usage_stats` each such chunk also carries the usage so far after its choices:
 * that small object is parsed alone (it has no strings, so the event's blank line ends it).
 *
 * Only a read made of whole token events, and read at an event boundary, is taken; anything else
 * (a partial event, a finish, a usage-only chunk, a comment, CRLF, another server's shape) gives
 * undefined and goes through the SSE decoder as before. Exact by construction: when the bytes
 * between start and end are one JSON string, the event is that token's chunk (a JSON string cannot
 * hold the end's unescaped quotes, so the first end found after the start is the event's own).
 */
import type { UpstreamUsage } from './upstream-parts.ts';
import { usageCounts } from './usage-counts.ts';

/** A token event, its content; or its content and the usage so far when its chunk has one. */
export type TokenEvent = string | { text: string; usage: UpstreamUsage };

/** The bytes around the content of every token event of one stream. */
export interface TokenEventLayout {
  /** `data: ` and the chunk up to the content string (`{"id":…"content":`). */
  head: Buffer;
  /** From the content string's closing quote (excluded) to the end of `choices` (`}…}]`). */
  choicesEnd: Buffer;
}

const CHUNK_END = Buffer.from('}\n\n');
const NULL_USAGE_END = '],"usage":null}';
const USAGE_FIELD = Buffer.from(',"usage":');
const BLANK_LINE = Buffer.from('\n\n');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;

/** The layout of a stream's token events, from its chunk start and its learned choices end. */
export function tokenEventLayout(chunkStart: string, choicesEnd: string): TokenEventLayout {
  return { head: Buffer.from(`data: ${chunkStart}`), choicesEnd: Buffer.from(choicesEnd) };
}

/**
 * What follows the content string up to the end of `choices` in `data`, a token chunk's JSON
 * that starts with `chunkStart`: `},"logprobs":null,"finish_reason":null,"token_ids":null}]`, or
 * `,"reasoning_content":null},…` (the delta's other fields).
 * The caller has checked that the chunk is one plain token (one choice, content only, no finish),
 * so every event that ends the same is one too. Undefined when the chunk has anything after its
 * choices but the usage, or an end with no quote (which a JSON string could hold).
 */
export function tokenChoicesEnd(data: string, chunkStart: string): string | undefined {
  if (!data.startsWith(chunkStart) || data.charCodeAt(chunkStart.length) !== QUOTE) return undefined;
  let i = chunkStart.length + 1;
  while (i < data.length && data.charCodeAt(i) !== QUOTE) i += data.charCodeAt(i) === BACKSLASH ? 2 : 1;
  if (i >= data.length) return undefined;
  const tail = data.slice(i + 1);
  // `…}]}`, or `…}],"usage":{…}}` with continuous usage: the usage varies, the choices' end does not.
  // SGLang's `…}],"usage":null}` on every token is constant: part of the end.
  const usageAt = tail.endsWith(NULL_USAGE_END) ? -1 : tail.indexOf('],"usage":');
  const end = usageAt >= 0 ? tail.slice(0, usageAt + 1) : tail.endsWith(']}') || tail.endsWith(NULL_USAGE_END) ? tail.slice(0, -1) : undefined;
  return end !== undefined && end.includes('"') ? end : undefined;
}

/**
 * Each token event in `read`, in order, when the read is made only of whole token events of
 * `layout`; otherwise undefined. The caller knows the read starts at an event boundary
 * (SseEventDecoder.atEventBoundary).
 */
export function tokenEventsOf(read: Buffer, layout: TokenEventLayout): TokenEvent[] | undefined {
  const { head, choicesEnd } = layout;
  const events: TokenEvent[] = [];
  let at = 0;
  while (at < read.length) {
    const open = at + head.length;
    if (open >= read.length || read.compare(head, 0, head.length, at, open) !== 0 || read[open] !== QUOTE) return undefined;
    const endAt = read.indexOf(choicesEnd, open + 1);
    const close = endAt - 1;
    if (endAt < 0 || close === open || read[close] !== QUOTE) return undefined;
    const text = jsonString(read, open, close);
    if (text === undefined) return undefined;
    const after = endAt + choicesEnd.length;
    if (startsAt(read, CHUNK_END, after)) {
      events.push(text);
      at = after + CHUNK_END.length;
      continue;
    }
    if (!startsAt(read, USAGE_FIELD, after)) return undefined;
    // `,"usage":{…}}` and the blank line: the usage object, then the chunk's own brace.
    const blank = read.indexOf(BLANK_LINE, after);
    if (blank < 0 || read[blank - 1] !== CLOSE_BRACE) return undefined;
    const usage = usageCounts(parsed(read.toString('utf8', after + USAGE_FIELD.length, blank - 1)));
    if (usage === undefined) return undefined;
    events.push({ text, usage });
    at = blank + BLANK_LINE.length;
  }
  return events;
}

function startsAt(read: Buffer, bytes: Buffer, at: number): boolean {
  return at + bytes.length <= read.length && read.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0;
}

/** The JSON string from the quote at `open` to the quote at `close`, or undefined if it is not one. */
function jsonString(read: Buffer, open: number, close: number): string | undefined {
  for (let i = open + 1; i < close; i++) {
    const byte = read[i]!;
    // Escapes, or what JSON.parse would reject: the rare case, parsed as JSON.
    if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) {
      const value = parsed(read.toString('utf8', open, close + 1));
      return typeof value === 'string' ? value : undefined;
    }
  }
  // Nothing to unescape: the content is its bytes (invalid UTF-8 becomes U+FFFD, as TextDecoder does).
  return read.toString('utf8', open + 1, close);
}

/** JSON.parse's value, or undefined for text that is not JSON. */
function parsed(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
