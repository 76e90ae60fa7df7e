import { describe, expect, it } from 'vitest';
import { pumpChatCompletion, streamChatCompletion, type UpstreamPart, type UpstreamTimeouts } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk, vllmUsage } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { collect, pause, sseHeaders, startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

// Review s41: a server (llama.cpp's behind some proxies, a proxy that drops [DONE]) that sends the
// finish_reason and the usage chunk but neither [DONE] nor the end of the response held the
// client's request until the idle timeout. Now the stream ends once the answer is whole (the usage
// after the finish), or after a short silence following the finish, and its socket is destroyed.

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
// Far beyond each test's own timeout: only the end of the answer can end these streams in time.
const slow = { connectMs: 60_000, headersMs: 60_000, firstTokenMs: 60_000, idleMs: 60_000 };
const track = trackedUpstreams();

const FINISHED = [START, { type: 'content', text: 'a' }, { type: 'finish', reason: 'stop' }];
const USAGE = { type: 'usage', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
const finished = vllmChunk({ content: 'a' }) + vllmChunk({}, 'stop');

/** An upstream that writes `script`'s pieces (waiting the numbers, in ms) and never ends the response. */
function heldOpen(...script: (string | number)[]): Promise<TestUpstream> {
  return track(
    startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      for (const step of script) {
        if (typeof step === 'number') await pause(step);
        else if (!res.destroyed) res.write(step);
      }
    }),
  );
}

const stream = (upstream: TestUpstream, timeouts: Partial<UpstreamTimeouts> = {}) =>
  collect(streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts: { ...slow, ...timeouts } }));

describe('a response held open after the finish_reason, without [DONE]', () => {
  it('ends once the usage chunk has come after the finish, closes that socket, and takes a new one for the next request', async () => {
    const upstream = await heldOpen(finished + vllmUsage(3, 1));
    const { parts, error } = await stream(upstream);
    expect(error).toBeUndefined();
    expect(parts).toEqual([...FINISHED, USAGE, { type: 'end' }]);
    await upstream.requestSocketClosed(0);
    // The half-read socket went nowhere near the pool: the next stream opens its own.
    await new Promise((resolve) => setImmediate(resolve));
    expect((await stream(upstream)).parts.at(-1)).toEqual({ type: 'end' });
    expect(upstream.connections()).toBe(2);
  });

  it('ends after a short silence when no usage chunk follows the finish, keep-alives or not', async () => {
    for (const after of [[], Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? 'event: ping\ndata: ping\n\n' : 100))]) {
      const upstream = await heldOpen(finished, ...after);
      const { parts, error } = await stream(upstream);
      expect(error).toBeUndefined();
      expect(parts).toEqual([...FINISHED, { type: 'end' }]);
      await upstream.requestSocketClosed(0);
    }
  });

  it('waits for a usage chunk that comes late after the finish, and for [DONE] and the end after it', async () => {
    const upstream = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        // Usage on the finish chunk too (continuous_usage_stats): the last usage chunk is still to come.
        res.write(vllmChunk({ content: 'a' }) + vllmChunk({}, 'stop', { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
        await pause(400);
        res.write(vllmUsage(3, 2));
        await pause(100);
        res.end('data: [DONE]\n\n');
      }),
    );
    const { parts, error } = await stream(upstream);
    expect(error).toBeUndefined();
    expect(parts.map((p) => p.type)).toEqual(['start', 'content', 'usage', 'finish', 'usage', 'end']);
    expect(parts.at(-2)).toEqual({ type: 'usage', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    // A response that ended is a socket for the next request (undici pools it just after the end).
    await new Promise((resolve) => setImmediate(resolve));
    await stream(upstream);
    expect(upstream.connections()).toBe(1);
  });

  it('ends the answer, not fails it, when the connection is reset after the usage chunk', async () => {
    const upstream = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        res.write(finished + vllmUsage(3, 1));
        await pause(20);
        res.socket?.resetAndDestroy();
      }),
    );
    const { parts, error } = await stream(upstream);
    expect(error).toBeUndefined();
    expect(parts).toEqual([...FINISHED, USAGE, { type: 'end' }]);
  });

  it('ends the answer without usage, not fails it, when the connection is reset after the finish and before the usage chunk', async () => {
    const upstream = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        res.write(finished);
        await pause(20);
        res.socket?.resetAndDestroy();
      }),
    );
    const { parts, error } = await stream(upstream);
    expect(error).toBeUndefined();
    expect(parts).toEqual([...FINISHED, { type: 'end' }]);
  });

  // Review: totalMs running out in the same place failed the whole answer with a total timeout
  // (its content already handed on) where a reset there ended it; the answer is no less whole.
  it('ends the answer without usage, not fails it, when totalMs runs out after the finish and before the usage chunk', async () => {
    // totalMs 1 s, not 300 ms: the finish, written at once, must come well before it on a loaded machine.
    const upstream = await heldOpen(finished, 5_000, vllmUsage(3, 1));
    const { parts, error } = await stream(upstream, { totalMs: 1_000 });
    expect(error).toBeUndefined();
    expect(parts).toEqual([...FINISHED, { type: 'end' }]);
    await upstream.requestSocketClosed(0);
  });

  it('still fails an answer whose totalMs runs out before its finish', async () => {
    const upstream = await heldOpen(vllmChunk({ content: 'a' }), 5_000, vllmChunk({}, 'stop'));
    const { parts, error } = await stream(upstream, { totalMs: 1_000 });
    expect(error).toMatchObject({ code: 'upstream_total_timeout' });
    expect(parts.map((p) => p.type)).toEqual(['start', 'content']);
  });

  it('still fails an answer reset before its finish', async () => {
    const upstream = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ content: 'a' }));
        await pause(20);
        res.socket?.resetAndDestroy();
      }),
    );
    const { parts, error } = await stream(upstream);
    expect(error).toBeDefined();
    expect(parts.map((p) => p.type)).toEqual(['start', 'content']);
  });

  it('is not an idle timeout: the finish stops the idle clock', async () => {
    const upstream = await heldOpen(finished + vllmUsage(3, 1));
    const { parts, error } = await stream(upstream, { idleMs: 50 });
    expect(error).toBeUndefined();
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });

  it('does not count the time a paused consumer holds the finish against the usage chunk', async () => {
    const upstream = await heldOpen(finished, 200, vllmUsage(3, 1));
    const parts: UpstreamPart[] = [];
    const pumped = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts: slow }, (part) => {
      parts.push(part);
      if (part.type === 'finish') {
        pumped.pause();
        // Longer than the wait after the finish: the usage chunk waits, unread or held, meanwhile.
        setTimeout(() => pumped.resume(), 1_500);
      }
    });
    await pumped.done;
    expect(parts).toEqual([...FINISHED, USAGE, { type: 'end' }]);
  });
});
