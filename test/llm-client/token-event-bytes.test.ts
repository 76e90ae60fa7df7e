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

/**
 * A decoder that has seen the stream's first chunk and its first token's, as PumpedStream's is
 * once a stream generates: the token chunk's end is learned from the first one, through the whole parse.
 */
function started(first: string = FIRST + tokenEvent('x')): ChatChunkDecoder {
  const decoder = new ChatChunkDecoder('asked');
  const sse = new SseEventDecoder((event) => decoder.decode(event.data, event.event));
  sse.feed(Buffer.from(first));
  return decoder;
}

/** A token's chunk as vLLM 0.10.2 and later write it: `token_ids` on every choice (null unless asked for). */
const tokenEvent0102 = (content: string, delta: Record<string, unknown> = {}) =>
  tokenEvent(content).replace(/"delta":\{"content":(".*")\},"logprobs":null,"finish_reason":null\}/, (_m, text: string) => `"delta":{"content":${text}${Object.entries(delta).map(([k, v]) => `,"${k}":${JSON.stringify(v)}`).join('')}},"logprobs":null,"finish_reason":null,"token_ids":null}`);

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

  it('reads nothing before the stream has given its first chunk and its first token', () => {
    expect(new ChatChunkDecoder('asked').tokenEvents(Buffer.from(tokenEvent('a')))).toBeUndefined();
    expect(started(FIRST).tokenEvents(Buffer.from(tokenEvent('a')))).toBeUndefined();
  });

  it("learns the end from the stream's own first token: vLLM 0.10.2+'s token_ids, a reasoning parser's null reasoning_content", () => {
    for (const delta of [{}, { reasoning_content: null }, { reasoning_content: null, reasoning: null }]) {
      const decoder = started(FIRST + tokenEvent0102('x', delta));
      const read = Buffer.from(['a', 'b"c', '\n'].map((t) => tokenEvent0102(t, delta)).join(''));
      expect(decoder.tokenEvents(read), JSON.stringify(delta)).toEqual(['a', 'b"c', '\n']);
      // The same end on the whole parse's shortcut, and no other end on either.
      expect(decoder.decode(tokenEvent0102('d', delta).slice(6, -2))).toEqual([{ type: 'content', text: 'd' }]);
      expect(decoder.tokenEvents(Buffer.from(tokenEvent('a')))).toBeUndefined();
    }
    // With the usage so far after the choices (continuous_usage_stats), learned from a counted chunk.
    const counted = (content: string, completion: number) =>
      tokenEvent0102(content).replace(/\]\}\n\n$/, `],"usage":{"prompt_tokens":3,"total_tokens":${3 + completion},"completion_tokens":${completion}}}\n\n`);
    const decoder = started(FIRST + counted('x', 1));
    expect(decoder.tokenEvents(Buffer.from(counted('a', 2) + tokenEvent0102('b')))).toEqual([{ text: 'a', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }, 'b']);
  });

  it('learns no end from a token that carries anything else: a finish, a reasoning text, tool calls', () => {
    for (const first of [
      vllmChunk({ content: 'x' }, 'stop'),
      vllmChunk({ content: 'x', reasoning_content: 'hm' }),
      vllmChunk({ content: 'x', tool_calls: [{ index: 0, function: { arguments: '{' } }] }),
    ]) {
      const decoder = started(FIRST + first);
      expect(decoder.tokenEvents(Buffer.from(tokenEvent('a'))), first).toBeUndefined();
      // It learns from the next plain one.
      decoder.decode(tokenEvent('y').slice(6, -2));
      expect(decoder.tokenEvents(Buffer.from(tokenEvent('a')))).toEqual(['a']);
    }
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

  // SGLang (pydantic's model_dump_json of its own models): `role` before `content` in the delta,
  // `matched_stop` on the choice, and `"usage":null` on every chunk. Its tokens took the whole
  // parse, the head having been written out in vLLM's field order.
  it("reads SGLang's token events too, learning the head as the server wrote it", () => {
    const sglang = (delta: string, finish = 'null') =>
      `data: {"id":"0f1e","object":"chat.completion.chunk","created":1764042665,"model":"qwen","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish},"matched_stop":null}],"usage":null}\n\n`;
    const token = (text: string) => sglang(`{"role":null,"content":${JSON.stringify(text)},"reasoning_content":null,"tool_calls":null}`);
    const decoder = started(sglang('{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null}') + token('x'));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 4 }), (contents) => {
        const read = Buffer.from(contents.map(token).join(''));
        expect(decoder.tokenEvents(read)).toEqual(contents);
      }),
    );
    // The finish, and a reasoning token, are not plain tokens: the whole parse reads them.
    expect(decoder.tokenEvents(Buffer.from(sglang('{"role":null,"content":"","reasoning_content":null,"tool_calls":null}', '"stop"')))).toBeUndefined();
    expect(decoder.tokenEvents(Buffer.from(sglang('{"role":null,"content":null,"reasoning_content":"hm","tool_calls":null}')))).toBeUndefined();
  });
});
