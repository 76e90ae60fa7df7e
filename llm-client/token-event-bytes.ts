/**
 * vLLM's events for one token, read straight from the bytes of a socket read.
 *
 * Within a stream such an event is fixed text around one JSON string: `data: ` and the chunk's
 * start (id, created, model: the same for every token), the content string, then the chunk's
 * constant end and the blank line. On every token's path, decoding the whole read as UTF-8, the
 * SSE parser's line splitting and the string compare of the long start cost more of the gateway's
 * CPU than the rest of the decode; here they are a byte compare, a byte search and the decode of
 * the few bytes of content.
 *
 * Only a read made of whole token events, and read at an event boundary, is taken; anything else
 * (a partial event, a finish, usage, a comment, CRLF, another server's shape) gives undefined and
 * goes through the SSE decoder as before. Exact by construction: when the bytes between start and
 * end are one JSON string, the event is that token's chunk (a JSON string cannot hold the end's
 * unescaped quotes, so the first end found after the start is the event's own).
 */

/** What follows the content string in vLLM's chunk for one token, byte for byte. */
export const TOKEN_CHUNK_END = '},"logprobs":null,"finish_reason":null}]}';

const EVENT_END = Buffer.from(`${TOKEN_CHUNK_END}\n\n`);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The bytes every token event of a stream starts with, given the chunk's start (`{"id":…"content":`). */
export function tokenEventHead(chunkStart: string): Buffer {
  return Buffer.from(`data: ${chunkStart}`);
}

/**
 * The content of each token event in `read`, in order, when the read is made only of whole token
 * events starting with `head`; otherwise undefined. The caller knows the read starts at an event
 * boundary (SseEventDecoder.atEventBoundary).
 */
export function tokenEventTexts(read: Buffer, head: Buffer): string[] | undefined {
  const texts: string[] = [];
  let at = 0;
  while (at < read.length) {
    const open = at + head.length;
    if (open >= read.length || read.compare(head, 0, head.length, at, open) !== 0 || read[open] !== QUOTE) return undefined;
    const end = read.indexOf(EVENT_END, open + 1);
    const close = end - 1;
    if (end < 0 || close === open || read[close] !== QUOTE) return undefined;
    const text = jsonString(read, open, close);
    if (text === undefined) return undefined;
    texts.push(text);
    at = end + EVENT_END.length;
  }
  return texts;
}

/** The JSON string from the quote at `open` to the quote at `close`, or undefined if it is not one. */
function jsonString(read: Buffer, open: number, close: number): string | undefined {
  for (let i = open + 1; i < close; i++) {
    const byte = read[i]!;
    // Escapes, or what JSON.parse would reject: the rare case, parsed as JSON.
    if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) return parsedString(read.toString('utf8', open, close + 1));
  }
  // Nothing to unescape: the content is its bytes (invalid UTF-8 becomes U+FFFD, as TextDecoder does).
  return read.toString('utf8', open + 1, close);
}

function parsedString(json: string): string | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
