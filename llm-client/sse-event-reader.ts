import type { EventSourceMessage } from 'eventsource-parser';
import { SseEventDecoder } from './sse-event-decoder.ts';

/**
 * Decodes a byte stream as server-sent events, pull-style (see SseEventDecoder for the rules).
 * The gateway's own upstream path pushes bytes into SseEventDecoder directly; this is the same
 * decoder for callers that hold an async iterable of bytes.
 */
export async function* readSseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const decoder = new SseEventDecoder((event) => pending.push(event));
  for await (const bytes of body) {
    decoder.feed(bytes);
    while (pending.length > 0) yield pending.shift()!;
  }
  decoder.end();
  while (pending.length > 0) yield pending.shift()!;
}
