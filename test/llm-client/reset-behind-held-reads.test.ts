import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamConnectionError } from '../../core/errors.ts';
import { forwardConnection, forwardRequest } from '../../llm-client/forward-request.ts';
import { pumpChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk, vllmUsage } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { pause, sseHeaders, startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

// Review s42: once a stream is generating, its reads wait, undecoded, for first-token-first's pass
// (first-token-first.ts), which steps aside a turn while a request is dispatched and not yet
// written, and runs in slices on a busy gateway. A connection reset read before that pass (a
// server or proxy that writes its last events and resets) failed the stream at once and threw the
// reads it held away: a chat answer whose finish_reason was among them failed as a lost
// connection though it was whole, and a forwarded answer lost its last bytes before its error.
// What was read comes first, then the error.

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const slow = { connectMs: 60_000, headersMs: 60_000, firstTokenMs: 60_000, idleMs: 60_000 };
const track = trackedUpstreams();

// A request that stays dispatched and unwritten (its connect never completes: a listener whose
// accept queue is full), so that every pass steps aside one turn, as on a gateway taking requests.
let listener: ReturnType<typeof spawn>;
const fillers: Socket[] = [];
const unwritten = new AbortController();
beforeAll(async () => {
  listener = spawn('python3', ['-c', "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()"], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(listener.stdout!, 'data')) as [Buffer];
  const port = Number(String(line).trim());
  for (let i = 0; i < 2; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}));
  await once(fillers[0]!, 'connect');
  const stuck = pumpChatCompletion({ baseUrl: `http://127.0.0.1:${port}/v1`, body, signal: unwritten.signal, timeouts: slow }, () => {});
  stuck.done.catch(() => {});
});
afterAll(() => {
  unwritten.abort();
  for (const socket of fillers) socket.destroy();
  listener.kill();
});

/**
 * Writes the first token, then (later, so the stream is generating) `last`, and resets the
 * connection in the same turn of the loop, so that both wait in the client's socket together.
 */
const resetAfter = (last: string): Promise<TestUpstream> =>
  track(
    startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }));
      await pause(30);
      res.write(last);
      process.nextTick(() => res.socket?.resetAndDestroy());
    }),
  );

function pump(upstream: TestUpstream): Promise<{ parts: UpstreamPart[]; error: unknown }> {
  const parts: UpstreamPart[] = [];
  const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts: slow }, (part) => parts.push(part));
  return stream.done.then(
    () => ({ parts, error: undefined }),
    (error: unknown) => ({ parts, error }),
  );
}

describe('a connection reset read with the last reads of a generating stream', () => {
  it('ends a chat answer whose finish_reason and usage came in them, not fails it', async () => {
    const { parts, error } = await pump(await resetAfter(vllmChunk({ content: 'b' }) + vllmChunk({}, 'stop') + vllmUsage(3, 2)));
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      START,
      { type: 'content', text: 'a' },
      { type: 'content', text: 'b' },
      { type: 'finish', reason: 'stop' },
      { type: 'usage', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      { type: 'end' },
    ]);
  });

  it('hands over the tokens read before it, then fails an answer cut before its finish', async () => {
    const { parts, error } = await pump(await resetAfter(vllmChunk({ content: 'b' }) + vllmChunk({ content: 'c' })));
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(parts).toEqual([START, { type: 'content', text: 'a' }, { type: 'content', text: 'b' }, { type: 'content', text: 'c' }]);
  });

  it('hands a forwarded answer every byte read before it, then the error', async () => {
    const upstream = await resetAfter('data: {"last":true}\n\n');
    const got: Buffer[] = [];
    const exchange = forwardRequest(
      forwardConnection({ baseUrl: upstream.baseUrl, timeouts: slow }),
      { method: 'POST', endpoint: '/completions', query: '', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), signal: new AbortController().signal },
      { head: () => {}, body: (chunk) => got.push(chunk) > 0 },
    );
    const error = await exchange.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(Buffer.concat(got).toString()).toBe(vllmChunk({ content: 'a' }) + 'data: {"last":true}\n\n');
  });
});
