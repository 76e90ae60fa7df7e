import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  UpstreamConnectTimeoutError,
  UpstreamFirstTokenTimeoutError,
  UpstreamHeadersTimeoutError,
  UpstreamIdleTimeoutError,
  UpstreamTotalTimeoutError,
} from '../../core/errors.ts';
import { closeUpstreamPools, pumpChatCompletion, streamChatCompletion, type UpstreamTimeouts } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk } from './fixtures/vllm-streams.ts';
import { collect, pause, sseHeaders, startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

// Each phase's timeout is short and every other one generous, so only the phase under test can fire.
const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
let upstream: TestUpstream | undefined;
let stopped = false;

afterEach(async () => {
  stopped = true;
  await upstream?.close();
  upstream = undefined;
  stopped = false;
});
afterAll(closeUpstreamPools);

function stream(baseUrl: string, timeouts: Partial<UpstreamTimeouts>) {
  return collect(
    streamChatCompletion({ baseUrl, body, signal: new AbortController().signal, timeouts: { ...generous, ...timeouts } }),
  );
}

describe('streamChatCompletion phase timeouts', () => {
  it('connect: a listener whose accept queue is full never completes the handshake', async () => {
    // Python (always present where the gateway runs) can listen without ever accepting; Node cannot.
    const listener: ChildProcess = spawn(
      'python3',
      ['-c', "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()"],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const fillers: Socket[] = [];
    try {
      const [line] = (await once(listener.stdout!, 'data')) as [Buffer];
      const port = Number(String(line).trim());
      // backlog 0 leaves room for one queued connection; after that the kernel drops SYNs.
      for (let i = 0; i < 2; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}));
      await once(fillers[0]!, 'connect');
      const { error } = await stream(`http://127.0.0.1:${port}/v1`, { connectMs: 200 });
      expect(error).toBeInstanceOf(UpstreamConnectTimeoutError);
      expect(error).toMatchObject({ code: 'upstream_connect_timeout' });
    } finally {
      for (const socket of fillers) socket.destroy();
      listener.kill();
    }
  });

  it('headers: a server that accepts the request but never answers, once the first-token wait is over too', async () => {
    upstream = await startTestUpstream(() => {});
    const { parts, error } = await stream(upstream.baseUrl, { headersMs: 150, firstTokenMs: 400 });
    expect(parts).toEqual([]);
    // The first-token deadline bounds the wait for the headers too (below): a shorter headersMs does not cut it.
    expect(error).toBeInstanceOf(UpstreamFirstTokenTimeoutError);
  });

  it('headers: the error names the wait it allowed, the longer of headersMs and firstTokenMs (regression: it named headersMs)', async () => {
    // A paused consumer stops the first-token clock (below), so only undici's headers timeout can
    // end a wait for headers that never come; it runs for the first-token wait (llama.cpp's case).
    upstream = await startTestUpstream(() => {});
    const stream = pumpChatCompletion(
      { baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts: { ...generous, headersMs: 150, firstTokenMs: 400 } },
      () => {},
    );
    stream.pause();
    const error = await stream.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHeadersTimeoutError);
    // Before: "upstream sent no response headers within 150 ms", after a wait of 400 ms.
    expect((error as Error).message).toBe('upstream sent no response headers within 400 ms');
  });

  it("headers: llama.cpp's server, which sends them with its first token, is given the first-token wait, not headersMs (regression)", async () => {
    // llama-server (since ggml-org/llama.cpp#16486) holds a stream's status line until its first
    // result, so that an error before it is a real HTTP error: its queueing and prefill come before
    // the headers. Cut at headersMs (60 s by default, half of firstTokenMs), a long prompt failed 504.
    upstream = await startTestUpstream(async (_req, res) => {
      await pause(1_500);
      sseHeaders(res);
      res.end(vllmChunk({ role: 'assistant', content: 'a' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const { parts, error } = await stream(upstream.baseUrl, { headersMs: 100, firstTokenMs: 4_000 });
    expect(error).toBeUndefined();
    expect(parts).toContainEqual({ type: 'content', text: 'a' });
  });

  it('first token: headers and keep-alive comments arrive, no token does', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      // A role-only chunk is not a token either: vLLM sends it, then prefill may still be running.
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      while (!stopped && !res.destroyed) {
        res.write(': keep-alive\n\n');
        await pause(20);
      }
    });
    const { parts, error } = await stream(upstream.baseUrl, { firstTokenMs: 250 });
    expect(parts).toEqual([START]);
    expect(error).toBeInstanceOf(UpstreamFirstTokenTimeoutError);
  });

  it('idle: the upstream stalls mid-stream', async () => {
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: 'Hel' }));
    });
    const { parts, error } = await stream(upstream.baseUrl, { idleMs: 200 });
    expect(parts).toEqual([START, { type: 'content', text: 'Hel' }]);
    expect(error).toBeInstanceOf(UpstreamIdleTimeoutError);
  });

  it('a stream that keeps producing tokens runs longer than the idle timeout without being cut', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      // 10 ms gaps against a 1 s idleMs (a loaded machine can stall the loop for hundreds of ms);
      // the stream runs past 1.5 s, so an idle timer that tokens do not reset still cuts it.
      for (let i = 0; i < 150; i++) {
        res.write(vllmChunk({ content: `${i} ` }));
        await pause(10);
      }
      res.end(vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const { parts, error } = await stream(upstream.baseUrl, { idleMs: 1_000, firstTokenMs: 1_000 });
    expect(error).toBeUndefined();
    expect(parts.filter((p) => p.type === 'content')).toHaveLength(150);
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });

  it('a slow consumer is not blamed on the upstream', async () => {
    // The upstream's own gap (150 ms) exceeds idleMs, but it falls entirely inside the time the
    // consumer holds the first part (300 ms), when the client is not reading.
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }));
      await pause(150);
      res.end(vllmChunk({ content: 'b' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts = [];
    for await (const part of streamChatCompletion({
      baseUrl: upstream.baseUrl,
      body,
      signal: new AbortController().signal,
      timeouts: { ...generous, idleMs: 100 },
    })) {
      parts.push(part);
      if (part.type === 'content' && part.text === 'a') await pause(300);
    }
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });

  it('a consumer that holds the first chunk is not blamed on the upstream\'s first token', async () => {
    // The first token comes 150 ms after the role chunk, well inside firstTokenMs (1 s: with 250
    // a loaded machine's late upstream handler could push the token past it); the consumer then
    // holds that role chunk for 1.5 s, past firstTokenMs, while the socket is not read.
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      await pause(150);
      res.end(vllmChunk({ content: 'a' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts = [];
    for await (const part of streamChatCompletion({
      baseUrl: upstream.baseUrl,
      body,
      signal: new AbortController().signal,
      timeouts: { ...generous, firstTokenMs: 1_000 },
    })) {
      parts.push(part);
      if (part.type === 'start') await pause(1_500);
    }
    expect(parts).toContainEqual({ type: 'content', text: 'a' });
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });

  it('total: the optional deadline cuts a stream that is still producing', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      while (!stopped && !res.destroyed) {
        res.write(vllmChunk({ content: 'x' }));
        await pause(10);
      }
    });
    // 1 s, not 200 ms: the start and a first token must come before it on a loaded machine.
    const { parts, error } = await stream(upstream.baseUrl, { totalMs: 1_000 });
    expect(parts.length).toBeGreaterThan(1);
    expect(error).toBeInstanceOf(UpstreamTotalTimeoutError);
  });
});
