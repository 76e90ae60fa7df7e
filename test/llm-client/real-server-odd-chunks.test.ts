import { describe, expect, it } from 'vitest';
import { UpstreamFirstTokenTimeoutError, UpstreamIdleTimeoutError, UpstreamProtocolError, UpstreamResponseError } from '../../core/errors.ts';
import { streamChatCompletion, type UpstreamTimeouts } from '../../llm-client/index.ts';
import { expectedPlainParts, MODEL, plainContentStream, START, vllmChunk, vllmUsage } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { collect, pause, sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

// Review s40: bytes real servers and proxies send that the simulator never does. An empty
// `data:` event (a proxy's keep-alive) failed the stream as "not JSON"; a tool-call delta with
// `index: null` failed it as a malformed chunk.

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const track = trackedUpstreams();

const stream = (baseUrl: string, timeouts: Partial<UpstreamTimeouts> = {}) =>
  collect(streamChatCompletion({ baseUrl, body, signal: new AbortController().signal, timeouts: { ...generous, ...timeouts } }));

/** Each event of an SSE text, with its blank line. */
const eventsOf = (sse: string) => sse.split(/(?<=\n\n)/);

// Review s40: an empty `data:` event (a proxy's keep-alive) failed the stream as "not JSON".
// Review s41: a named ping's plain-text data failed it the same way; its JSON data read as a chunk.
const KEEP_ALIVES = {
  'an empty data: event (a keep-alive)': ['data: \n\n', 'data:\n\n', 'data: \r\n\r\n', 'data:  \n\n'],
  "a named event that is not an error (a server's or proxy's ping)": ['event: ping\ndata: ping\n\n', 'event: keepalive\ndata: {"type":"keepalive"}\n\n', 'event: ping\ndata: {}\n\n', 'event: ping\n\n'],
};

describe.each(Object.entries(KEEP_ALIVES))('%s', (_kind, keepAlives) => {
  it('is skipped before the first chunk and between chunks, in one read and in reads of their own', async () => {
    const events = eventsOf(plainContentStream);
    // One of each kind before the first chunk, then one after every chunk but [DONE].
    const sse = keepAlives.join('') + events.map((e, i) => (i < events.length - 1 ? e + keepAlives[i % keepAlives.length]! : e)).join('');
    const all = eventsOf(sse);
    const everyEvent = all.slice(1).map((_, i) => Buffer.byteLength(all.slice(0, i + 1).join('')));
    for (const cuts of [[], everyEvent]) {
      const upstream = await track(startSseUpstream(sse, cuts));
      const { parts, error } = await stream(upstream.baseUrl);
      expect(error, `cuts ${cuts.length}`).toBeUndefined();
      expect(parts).toEqual(expectedPlainParts);
    }
  });

  it('feeds neither the first-token nor the idle timer, as a comment keep-alive does not', async () => {
    for (const [before, timeouts, Expected] of [
      [vllmChunk({ role: 'assistant', content: '' }), { firstTokenMs: 250 }, UpstreamFirstTokenTimeoutError],
      [vllmChunk({ content: 'Hel' }), { idleMs: 200 }, UpstreamIdleTimeoutError],
    ] as const) {
      const upstream = await track(
        startTestUpstream(async (_req, res) => {
          sseHeaders(res);
          res.write(before);
          while (!res.destroyed && !res.socket?.destroyed) {
            res.write(keepAlives[0]!);
            await pause(20);
          }
        }),
      );
      const { error } = await stream(upstream.baseUrl, timeouts);
      expect(error).toBeInstanceOf(Expected);
    }
  });
});

describe('a named event', () => {
  it('is still an error when it is an `event: error`, empty data and all', async () => {
    const upstream = await track(startSseUpstream(`${vllmChunk({ content: 'a' })}event: error\ndata: \n\n`));
    const { error } = await stream(upstream.baseUrl);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    // Before: a 500 whose message was the empty data, so the client's error said nothing.
    expect(error).toMatchObject({ status: 500, inStream: true, message: 'upstream reported an error mid-stream, with no message' });
  });

  it('quotes an `event: error` with plain-text data, as llama.cpp and proxies send it', async () => {
    const upstream = await track(startSseUpstream(`${vllmChunk({ content: 'a' })}event: error\ndata: slot 3 failed to decode\n\n`));
    const { error } = await stream(upstream.baseUrl);
    expect(error).toMatchObject({ status: 500, inStream: true, message: 'upstream reported an error mid-stream: slot 3 failed to decode' });
  });

  it("is a chunk when its name is `message`, the SSE default; `event: error` still fails with the upstream's message", async () => {
    const named = plainContentStream.replace(/^data: \{/gm, 'event: message\ndata: {');
    const ok = await stream((await track(startSseUpstream(named))).baseUrl);
    expect(ok.error).toBeUndefined();
    expect(ok.parts).toEqual(expectedPlainParts);

    const failing = `${vllmChunk({ content: 'a' })}event: ping\ndata: ping\n\nevent: error\ndata: {"error":{"message":"slot failed","code":500}}\n\n`;
    const { parts, error } = await stream((await track(startSseUpstream(failing))).baseUrl);
    expect(parts).toEqual([START, { type: 'content', text: 'a' }]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 500, message: 'slot failed' });
  });

  it('leaves an unnamed event whose data is not JSON an error: the upstream is broken', async () => {
    const { error } = await stream((await track(startSseUpstream(`${vllmChunk({ content: 'a' })}data: ping\n\n${vllmChunk({}, 'stop')}`))).baseUrl);
    expect(error).toBeInstanceOf(UpstreamProtocolError);
    expect((error as Error).message).toMatch(/not JSON/);
  });
});

describe('a tool-call delta with index: null', () => {
  it('numbers the calls by their ids, one call or two in a delta, a fragment without an id going to the call last opened', async () => {
    const sse = [
      vllmChunk({ role: 'assistant', content: '' }),
      vllmChunk({ tool_calls: [{ index: null, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: null } }] }),
      vllmChunk({ tool_calls: [{ index: null, id: null, function: { arguments: '{"city": "Paris"}' } }] }),
      vllmChunk({
        tool_calls: [
          { index: null, id: 'call_b', type: 'function', function: { name: 'a', arguments: '{}' } },
          { index: null, id: 'call_c', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      }),
      vllmChunk({ content: '' }, 'tool_calls'),
      vllmUsage(20, 9),
      'data: [DONE]\n\n',
    ].join('');
    const upstream = await track(startSseUpstream(sse));
    const { parts, error } = await stream(upstream.baseUrl);
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      START,
      { type: 'tool-call-delta', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, arguments: '{"city": "Paris"}' },
      { type: 'tool-call-delta', index: 1, id: 'call_b', name: 'a', arguments: '{}' },
      { type: 'tool-call-delta', index: 2, id: 'call_c', name: 'b', arguments: '{}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } },
      { type: 'end' },
    ]);
  });
});

// The SSE spec lets a server end its lines with a lone CR. The decoder held a CR that ended a read
// until the next read, so each such event waited for the one after it: a token that had arrived
// tripped the first-token deadline while the model took its time over the next.
describe('CR-only line endings', () => {
  it('hand each event over as it arrives, not with the next read', async () => {
    const cr = (sse: string) => sse.replace(/\n/g, '\r');
    const upstream = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        res.write(cr(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: 'Hel' })));
        await pause(400);
        res.end(cr(vllmChunk({}, 'stop') + vllmUsage(3, 1) + 'data: [DONE]\n\n'));
      }),
    );
    const { parts, error } = await stream(upstream.baseUrl, { firstTokenMs: 200 });
    expect(error).toBeUndefined();
    expect(parts.slice(0, 2)).toEqual([START, { type: 'content', text: 'Hel' }]);
  });
});
