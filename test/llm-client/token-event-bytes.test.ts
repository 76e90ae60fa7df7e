import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChatChunkDecoder, tokenEventParts } from '../../llm-client/chat-chunk-decoder.ts';
import { SseEventDecoder } from '../../llm-client/sse-event-decoder.ts';
import type { TokenEvent } from '../../llm-client/token-event-bytes.ts';
import type { UpstreamPart } from '../../llm-client/upstream-parts.ts';
import { vllmChunk } from './fixtures/vllm-streams.ts';

// Token events as vLLM writes them (the recorded-style fixtures every llm-client test uses).
const tokenEvent = (content: string) => vllmChunk({ content });
const FIRST = vllmChunk({ role: 'assistant', content: '' });

/** A decoder that has seen the stream's first chunk, as PumpedStream's is once a stream generates. */
function started(): ChatChunkDecoder {
  const decoder = new ChatChunkDecoder('asked');
  const sse = new SseEventDecoder((event) => decoder.decode(event.data, event.event));
  sse.feed(Buffer.from(FIRST));
  return decoder;
}

/** The content parts the SSE decoder and the whole decode give for the same bytes. */
function slowPath(read: Buffer): UpstreamPart[] {
  const decoder = started();
  const parts: UpstreamPart[] = [];
  const sse = new SseEventDecoder((event) => parts.push(...decoder.decode(event.data, event.event)));
  sse.feed(read);
  return parts;
}

const asParts = (events: TokenEvent[]): UpstreamPart[] => events.flatMap(tokenEventParts);

/** A token's chunk with the usage so far after its choices, as vLLM writes it with continuous_usage_stats. */
const countedEvent = (content: string, prompt: number, completion: number) =>
  vllmChunk({ content }, null, { usage: { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion } });

describe('token events read from bytes (ChatChunkDecoder.tokenEvents)', () => {
  it('reads a read of whole token events as the SSE decoder and the whole parse do, for any texts', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 4 }), (contents) => {
        const read = Buffer.from(contents.map(tokenEvent).join(''));
        const events = started().tokenEvents(read);
        expect(events).toEqual(contents);
        expect(asParts(events!)).toEqual(slowPath(read));
      }),
    );
  });

  it('reads the usage so far on each token chunk (continuous_usage_stats) as the whole parse does, usage before content', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary' }), fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }), (tokens) => {
        const read = Buffer.from(tokens.map(([content, prompt, completion]) => countedEvent(content, prompt, completion)).join(''));
        const events = started().tokenEvents(read);
        expect(events).toEqual(tokens.map(([text, prompt, completion]) => ({ text, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })));
        expect(asParts(events!)).toEqual(slowPath(read));
      }),
    );
    // Plain and counted events in one read, and a usage without total_tokens.
    const read = Buffer.from(tokenEvent('a') + vllmChunk({ content: 'b' }, null, { usage: { prompt_tokens: 3, completion_tokens: 2 } }));
    expect(started().tokenEvents(read)).toEqual(['a', { text: 'b', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }]);
    expect(asParts(started().tokenEvents(read)!)).toEqual(slowPath(read));
  });

  it('gives the same text as TextDecoder for invalid UTF-8 in the content', () => {
    const [before, after] = tokenEvent('\u0000').split('"\\u0000"') as [string, string];
    const read = Buffer.concat([Buffer.from(`${before}"`), Buffer.from([0x61, 0xc3, 0xe2, 0x82, 0xff, 0x62]), Buffer.from(`"${after}`)]);
    expect(asParts(started().tokenEvents(read)!)).toEqual(slowPath(read));
  });

  it('leaves every other read to the SSE decoder', () => {
    const decoder = started();
    const whole = tokenEvent('a');
    const others = [
      // cut short, inside or after the event
      whole.slice(0, 60),
      whole.slice(0, -1),
      whole + tokenEvent('b').slice(0, 30),
      // vLLM's last token carries its finish reason; usage; [DONE]; a keep-alive comment
      whole.replace('"finish_reason":null', '"finish_reason":"stop","stop_reason":null'),
      whole.replace(/"choices":.*/, '"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n'),
      'data: [DONE]\n\n',
      `: ping\n\n${whole}`,
      // CRLF framing, an event name, no space after "data:", another stream's id
      whole.replace(/\n\n$/, '\r\n\r\n'),
      `event: error\n${whole}`,
      whole.replace('data: ', 'data:'),
      whole.replace(/chatcmpl-\w+/, 'chatcmpl-60'),
      // the same start and end around more than one string
      whole.replace('"a"}', '"a","tool_calls":[{"index":0,"function":{"name":"f"}}]}'),
      whole.replace('"a"}', '"a}'),
      // usage the schema must word an error for, or that is followed by another field
      countedEvent('a', 1, 1).replace('"prompt_tokens":1', '"prompt_tokens":-1'),
      countedEvent('a', 1, 1).replace('"prompt_tokens":1', '"prompt_tokens":"1"'),
      countedEvent('a', 1, 1).replace('"usage":{', '"usage":null,"x":{'),
      countedEvent('a', 1, 1).replace(/}}\n\n$/, '},"system_fingerprint":"fp"}\n\n'),
      countedEvent('a', 1, 1).replace(/}}\n\n$/, '}\n\n'),
    ];
    for (const other of others) expect(decoder.tokenEvents(Buffer.from(other)), other).toBeUndefined();
  });

  it('reads nothing before the stream has given its first chunk', () => {
    expect(new ChatChunkDecoder('asked').tokenEvents(Buffer.from(tokenEvent('a')))).toBeUndefined();
  });
});

describe('SseEventDecoder.atEventBoundary', () => {
  it('holds only after a read that ends with a blank line', () => {
    const sse = new SseEventDecoder(() => undefined);
    expect(sse.atEventBoundary).toBe(true);
    const event = tokenEvent('a');
    for (const [read, boundary] of [
      [event.slice(0, 20), false],
      [event.slice(20, -1), false],
      ['\n', false],
      [event, true],
      [`${event}data: x\n`, false],
      ['\n\n', true],
      ['', false],
    ] as const) {
      sse.feed(Buffer.from(read));
      expect(sse.atEventBoundary, JSON.stringify(read)).toBe(boundary);
    }
  });
});
