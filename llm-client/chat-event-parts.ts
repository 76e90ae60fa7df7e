import type { EventSourceMessage } from 'eventsource-parser';
import type { AnswerTail } from './answer-tail.ts';
import { tokenEventParts, type ChatChunkDecoder } from './chat-chunk-decoder.ts';
import { isTokenEvent, type HeldEvent } from './held-events.ts';
import type { UpstreamPart } from './upstream-parts.ts';

/**
 * What one SSE event of a chat stream is: the end marker, something that only keeps the socket
 * alive, an in-stream error, or a chunk to decode.
 */
export type ChatEventKind = 'done' | 'keep-alive' | 'error' | 'chunk';

/**
 * OpenAI's chat stream names no event: every chunk is an unnamed `data:` event (the SSE default,
 * `message`). A name is then either `error` (vLLM's and llama.cpp's in-stream errors) or a
 * server's or proxy's own event (`event: ping`, `event: keepalive`, often with plain-text data):
 * that one is passed over, as a comment is. Decoded, it failed the whole stream as "not JSON";
 * and one with JSON data read as a chunk with no choices, a `start` made of a ping.
 *
 * An unnamed event whose data is not JSON (and not blank, not [DONE]) stays a chunk, for its
 * decode to fail: nothing an OpenAI-compatible server sends looks like it, so it is a broken
 * upstream or a body that is not this stream, and passed over it could hide the answer's text.
 */
export function chatEventKind(event: EventSourceMessage): ChatEventKind {
  if (event.data.trimEnd() === '[DONE]') return 'done';
  if (event.event === 'error') return 'error';
  if (event.event !== undefined && event.event !== 'message') return 'keep-alive';
  // `data: ` alone is some proxies' keep-alive: like a comment it proves the socket alive, not
  // the model's progress, so it is no chunk (decoded, it failed the stream as "not JSON").
  if (event.data.trim() === '') return 'keep-alive';
  return 'chunk';
}

/**
 * The parts one event of a chat stream carries, undefined for one that carries none: [DONE] (told
 * to `tail`), a keep-alive, anything after a whole answer. Throws what the chunk decoder throws.
 */
export function chatEventParts(event: HeldEvent, decoder: ChatChunkDecoder, tail: AnswerTail): UpstreamPart[] | undefined {
  // Whatever follows a whole answer is read and dropped, so the socket ends cleanly and goes back
  // to the keep-alive pool instead of being destroyed.
  if (tail.whole) return undefined;
  if (isTokenEvent(event)) return tokenEventParts(event);
  const kind = chatEventKind(event);
  if (kind === 'done') tail.done();
  if (kind === 'done' || kind === 'keep-alive') return undefined;
  return decoder.decode(event.data, kind === 'error' ? 'error' : undefined);
}
