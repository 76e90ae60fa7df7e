import type { EventSourceMessage } from 'eventsource-parser';
import type { ChatChunkDecoder } from './chat-chunk-decoder.ts';
import type { SseEventDecoder } from './sse-event-decoder.ts';
import type { TokenEvent } from './token-event-bytes.ts';

/** A held event: an SSE event, or a token event read straight from the bytes (token-event-bytes.ts). */
export type HeldEvent = EventSourceMessage | TokenEvent;

/** Whether a held event was read from the bytes (it needs no SSE nor JSON decode). */
export const isTokenEvent = (event: HeldEvent): event is TokenEvent => typeof event === 'string' || 'usage' in event;

/**
 * What one upstream stream holds back from its consumer, in arrival order: events that came while
 * the consumer had paused or while first-token-first (first-token-first.ts) had deferred the
 * stream, and reads that came once the stream was generating, not yet decoded. A later token's
 * bytes wait for first-token-first's pass undecoded, so the I/O phase that also reads other
 * streams' first tokens and new requests spends only undici's own work on them.
 */
export class HeldEvents {
  /** Decoded, in order, not yet handed to the consumer. */
  readonly events: HeldEvent[] = [];
  #reads: Buffer[] = [];
  /**
   * `decodeReads` is running: the events the SSE decoder emits now belong to reads already held,
   * so they join `events` without asking for another pass.
   */
  decoding = false;

  get isEmpty(): boolean {
    return this.events.length === 0 && this.#reads.length === 0;
  }

  get hasReads(): boolean {
    return this.#reads.length > 0;
  }

  holdRead(chunk: Buffer): void {
    this.#reads.push(chunk);
  }

  /**
   * Decodes the held reads into `events`, then ends the SSE decoder if the body has ended
   * (`bodyEnded`: the end was held behind the reads). The SSE decoder's own events reach `events`
   * through its callback, which sees `decoding`. Throws what the decoders throw.
   */
  decodeReads(sse: SseEventDecoder, decoder: ChatChunkDecoder, bodyEnded: boolean): void {
    const reads = this.#reads;
    this.#reads = [];
    this.decoding = true;
    try {
      for (const chunk of reads) {
        // Most reads of a generating vLLM stream are whole token events: read from the bytes.
        const tokens = sse.atEventBoundary ? decoder.tokenEvents(chunk) : undefined;
        if (tokens === undefined) sse.feed(chunk);
        else for (const token of tokens) this.events.push(token);
      }
      if (bodyEnded) sse.end();
    } finally {
      this.decoding = false;
    }
  }

  clear(): void {
    this.events.length = 0;
    this.#reads.length = 0;
  }
}
