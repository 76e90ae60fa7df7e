import { describe, expect, it } from 'vitest';
import { UpstreamProtocolError } from '../../core/errors.ts';
import { SseEventDecoder } from '../../llm-client/sse-event-decoder.ts';
import { readSseEvents } from '../../llm-client/sse-event-reader.ts';
import { plainContentStream, reframedStream } from './fixtures/vllm-streams.ts';

async function* pieces(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

async function events(bytes: Buffer, cuts: number[] = []) {
  const out = [];
  for await (const e of readSseEvents(pieces(bytes, cuts))) out.push(e);
  return out;
}

describe('readSseEvents', () => {
  it('yields the same events however the bytes are cut into reads, including inside UTF-8 characters', async () => {
    for (const text of [plainContentStream, reframedStream]) {
      const bytes = Buffer.from(text, 'utf8');
      const whole = await events(bytes);
      expect(whole.length).toBeGreaterThanOrEqual(5);
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(await events(bytes, [cut])).toEqual(whole);
      }
      const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
      expect(await events(bytes, everyByte)).toEqual(whole);
    }
  });

  it('joins multi-line data with "\\n", accepts CRLF and drops comments', async () => {
    const bytes = Buffer.from(': hello\r\n\r\ndata: {"a":\r\ndata: 1}\r\n\r\n:\r\nevent: error\r\ndata: x\r\n\r\n');
    expect(await events(bytes)).toEqual([
      { id: undefined, event: undefined, data: '{"a":\n1}' },
      { id: undefined, event: 'error', data: 'x' },
    ]);
  });

  it('dispatches a last event that EOF cuts short of its blank line', async () => {
    expect((await events(Buffer.from('data: 1\n\ndata: [DONE]'))).map((e) => e.data)).toEqual(['1', '[DONE]']);
    expect((await events(Buffer.from('data: 1\n\ndata: [DONE]\n'))).map((e) => e.data)).toEqual(['1', '[DONE]']);
  });

  it('keeps the content of a UTF-8 BOM-prefixed stream', async () => {
    expect((await events(Buffer.from('\uFEFFdata: 1\n\n'))).map((e) => e.data)).toEqual(['1']);
  });

  it('refuses an event that grows without end', async () => {
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('data: ');
      const block = Buffer.alloc(1024 * 1024, 'a');
      for (let i = 0; i < 20; i++) yield block;
    }
    const read = async () => {
      for await (const _ of readSseEvents(endless())) void _;
    };
    await expect(read()).rejects.toBeInstanceOf(UpstreamProtocolError);
  });
});

// WHATWG SSE: a lone CR ends a line as LF and CRLF do. eventsource-parser holds a CR that ends a
// read until the next read shows whether an LF follows, so with CR-only line endings each event
// waited for the next read: a first token that had arrived could still trip the first-token deadline.
describe('SseEventDecoder with CR-only line endings', () => {
  it('dispatches an event in the read that completes it', () => {
    const got: string[] = [];
    const decoder = new SseEventDecoder((event) => got.push(event.data));
    decoder.feed(Buffer.from('data: 1\r\r'));
    expect(got).toEqual(['1']);
    decoder.feed(Buffer.from('data: 2\r'));
    decoder.feed(Buffer.from('\r'));
    expect(got).toEqual(['1', '2']);
  });

  it('still reads a CRLF split between two reads as one line end', () => {
    const got: string[] = [];
    const decoder = new SseEventDecoder((event) => got.push(event.data));
    decoder.feed(Buffer.from('data: 1\r'));
    decoder.feed(Buffer.from('\ndata: 2\r\n\r'));
    expect(got).toEqual(['1\n2']);
    decoder.feed(Buffer.from('\n'));
    decoder.feed(Buffer.from('data: 3\r\n\r\n'));
    decoder.end();
    expect(got).toEqual(['1\n2', '3']);
  });
});
