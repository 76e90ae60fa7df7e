import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';
import { UpstreamProtocolError } from '../core/errors.ts';

// A chat chunk is a few hundred bytes; 16 Mi characters of one unfinished event means the peer
// is not speaking SSE, and buffering it further would only grow memory.
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
const STREAMING = { stream: true } as const;
const LF = 0x0a;
const CR = '\r';
const LINE_END = /\r\n?/g;

/**
 * Push-based server-sent events: bytes in, each complete event handed to `onEvent` at once, in
 * the same call stack as the read that completed it (no queue, no promise per event). Handles
 * events split across reads (including inside a multi-byte UTF-8 character), multi-line `data:`
 * fields, CRLF and CR-only line ends, and comment keep-alives. Comments are dropped: they prove
 * the socket is alive, not that the model is making progress, so they must not feed any token timer.
 */
export class SseEventDecoder {
  readonly #parser: EventSourceParser;
  readonly #text = new TextDecoder('utf-8');
  #failure: ParseError | undefined;
  #atEventBoundary = true;
  /** The last read's text ended with a CR, fed as a line end: an LF that opens the next read is its CRLF's. */
  #endedWithCr = false;

  constructor(onEvent: (event: EventSourceMessage) => void) {
    this.#parser = createParser({
      maxBufferSize: MAX_EVENT_CHARS,
      onEvent,
      onError: (error) => {
        // Unknown fields are ignored by the SSE spec, but for one: llama.cpp's server reports an
        // error in its stream as a line of its own, `error: {…}` (then `data: [DONE]`), which
        // dropped would pass the answer cut short for a whole one. It is read as an error event.
        if (error.type === 'unknown-field' && error.field === 'error' && error.value !== undefined) onEvent({ event: 'error', data: error.value, id: undefined });
        // Only an oversized event is fatal.
        if (error.type === 'max-buffer-size-exceeded') this.#failure ??= error;
      },
    });
  }

  /**
   * Nothing is buffered: the last read ended with a blank line ("\n\n"), so every event it began
   * has been dispatched and no line or UTF-8 character is left half read. The next read may then
   * be taken apart by other means (token-event-bytes.ts) without feeding it here.
   */
  get atEventBoundary(): boolean {
    return this.#atEventBoundary;
  }

  /** Feeds one read. Throws UpstreamProtocolError once an event outgrows the limit. */
  feed(bytes: Uint8Array): void {
    const last = bytes.length - 1;
    this.#atEventBoundary = last > 0 && bytes[last] === LF && bytes[last - 1] === LF;
    if (this.#failure === undefined) this.#parser.feed(this.#lineEnded(this.#text.decode(bytes, STREAMING)));
    this.#check();
  }

  /**
   * A CR is a whole line end in SSE, CR-only streams included. eventsource-parser holds a CR that
   * ends its input until it sees whether an LF follows, so each event of a CR-only stream waited
   * for the next read (a token that had come could still trip the first-token deadline). Every
   * line end goes in as an LF instead, and an LF that opens the next read, the rest of a CRLF the
   * read split, is dropped.
   */
  #lineEnded(text: string): string {
    if (text === '') return text;
    if (this.#endedWithCr && text.charCodeAt(0) === LF) text = text.slice(1);
    this.#endedWithCr = text.endsWith(CR);
    return text.includes(CR) ? text.replace(LINE_END, '\n') : text;
  }

  /**
   * The byte stream ended. The SSE spec drops an event that EOF cuts short (no blank line after
   * it); we dispatch it instead, so a server ending with "data: [DONE]" works and a truncated
   * chunk surfaces as a JSON error rather than vanishing.
   */
  end(): void {
    if (this.#failure === undefined) this.#parser.feed(`${this.#text.decode()}\n\n`);
    this.#check();
  }

  #check(): void {
    if (this.#failure) throw new UpstreamProtocolError(`upstream sent an unusable event stream: ${this.#failure.message}`);
  }
}
