import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { UpstreamProtocolError } from '../core/errors.ts';

// A chat chunk is a few hundred bytes; 16 Mi characters of one unfinished event means the peer
// is not speaking SSE, and buffering it further would only grow memory.
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Decodes a byte stream as server-sent events. Handles events split across reads (including
 * inside a multi-byte UTF-8 character), multi-line `data:` fields, CRLF and comment keep-alives.
 * Comments are dropped: they prove the socket is alive, not that the model is making progress,
 * so they must not feed any token timer.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  let failure: ParseError | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent: (event) => pending.push(event),
    onError: (error) => {
      // Unknown fields are ignored by the SSE spec; only an oversized event is fatal.
      if (error.type === 'max-buffer-size-exceeded') failure ??= error;
    },
  });
  const decoder = new TextDecoder('utf-8');
  const drain = function* (): Generator<EventSourceMessage> {
    if (failure) throw new UpstreamProtocolError(`upstream sent an unusable event stream: ${failure.message}`);
    while (pending.length > 0) yield pending.shift()!;
  };

  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    yield* drain();
  }
  // The SSE spec drops an event that EOF cuts short (no blank line after it); we dispatch it
  // instead, so a server ending with "data: [DONE]" works and a truncated chunk surfaces as a
  // JSON error rather than vanishing.
  parser.feed(`${decoder.decode()}\n\n`);
  yield* drain();
}
