import { describe, expect, it } from 'vitest';
import { ChatChunkDecoder } from '../../llm-client/chat-chunk-decoder.ts';
import { HeldEvents } from '../../llm-client/held-events.ts';
import { SseEventDecoder } from '../../llm-client/sse-event-decoder.ts';
import { ErrorBody, MAX_ERROR_BODY_BYTES } from '../../llm-client/upstream-response-error.ts';
import { vllmChunk } from './fixtures/vllm-streams.ts';

/** A held queue wired as PumpedStream wires it: the SSE decoder's events join the queue while it decodes. */
function setUp() {
  const held = new HeldEvents();
  const decoder = new ChatChunkDecoder('asked');
  const seenOutside: string[] = [];
  const sse = new SseEventDecoder((event) => {
    if (held.decoding) held.events.push(event);
    else seenOutside.push(event.data);
  });
  sse.feed(Buffer.from(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: 'x' })));
  // The first chunks went by the SSE decoder and the whole decode, as they do in a stream: the
  // token's taught the decoder how this stream's token chunks end.
  for (const data of seenOutside.splice(0)) decoder.decode(data, undefined);
  return { held, decoder, sse, seenOutside };
}

/** The texts of held events, whichever path decoded them. */
const texts = (held: HeldEvents) =>
  held.events.map((event) => (typeof event === 'string' ? event : 'data' in event ? JSON.parse(event.data).choices[0].delta.content : event.text));

describe('HeldEvents', () => {
  it('decodes held reads in arrival order, whole token events from their bytes and a split event through the SSE decoder', () => {
    const { held, decoder, sse } = setUp();
    const split = vllmChunk({ content: 'c' });
    held.holdRead(Buffer.from(vllmChunk({ content: 'a' }) + vllmChunk({ content: 'b' })));
    held.holdRead(Buffer.from(split.slice(0, 10)));
    held.holdRead(Buffer.from(split.slice(10) + vllmChunk({ content: 'd' })));
    expect(held.hasReads).toBe(true);

    held.decodeReads(sse, decoder, false);

    expect(texts(held)).toEqual(['a', 'b', 'c', 'd']);
    expect(typeof held.events[0]).toBe('string'); // the byte path
    expect(typeof held.events[2]).toBe('object'); // after a split read: the SSE decoder
    expect(held.hasReads).toBe(false);
    expect(held.decoding).toBe(false);
  });

  it('ends the SSE decoder after the held reads when the body ended behind them', () => {
    const { held, decoder, sse } = setUp();
    // An event without its blank line completes only at the end of the body.
    held.holdRead(Buffer.from(vllmChunk({ content: 'tail' }).trimEnd()));
    held.decodeReads(sse, decoder, false);
    expect(held.events).toEqual([]);

    held.holdRead(Buffer.alloc(0));
    held.decodeReads(sse, decoder, true);
    expect(texts(held)).toEqual(['tail']);
  });

  it('leaves `decoding` off when a decoder throws, and clear() drops events and reads', () => {
    const { held, decoder } = setUp();
    const throwing = new SseEventDecoder(() => {
      throw new Error('consumer failed');
    });
    held.holdRead(Buffer.from('data: {"not": "a token"}\n\n'));
    expect(() => held.decodeReads(throwing, decoder, false)).toThrow('consumer failed');
    expect(held.decoding).toBe(false);

    held.events.push('x');
    held.holdRead(Buffer.from('y'));
    expect(held.isEmpty).toBe(false);
    held.clear();
    expect(held.isEmpty).toBe(true);
  });
});

describe('ErrorBody', () => {
  it('says when the bound is reached and keeps the upstream message', () => {
    const body = new ErrorBody(503);
    expect(body.add(Buffer.from('{"error":{"message":"overloaded"}}'))).toBe(false);
    expect(body.error()).toMatchObject({ status: 503, message: expect.stringContaining('overloaded') });

    const big = new ErrorBody(500);
    expect(big.add(Buffer.alloc(MAX_ERROR_BODY_BYTES - 1, 'x'))).toBe(false);
    expect(big.add(Buffer.from('xy'))).toBe(true);
  });
});
