import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ClientAbortedError, InvalidRequestError, UpstreamIdleTimeoutError, UpstreamResponseError } from '../../core/errors.ts';
import { closeUpstreamPools, createChatCompletionPump, pumpChatCompletion, streamChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import {
  expectedPlainParts,
  midStreamErrorStream,
  MODEL,
  modelNotFoundBody,
  plainContentStream,
  reasoningStream,
  reframedStream,
  START,
  toolCallStream,
  vllmChunk,
} from './fixtures/vllm-streams.ts';
import { collect, pause, sseHeaders, startEndlessUpstream, startSseUpstream, startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
let upstream: TestUpstream | undefined;

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});
afterAll(closeUpstreamPools);

async function serve(stream: string, cuts: number[] = []): Promise<TestUpstream> {
  upstream = await startSseUpstream(stream, cuts);
  return upstream;
}

/** Every part pushed, and how `done` settled. */
async function pump(server: TestUpstream, onPart?: (part: UpstreamPart, parts: UpstreamPart[]) => void, signal = new AbortController().signal) {
  const parts: UpstreamPart[] = [];
  const stream = pumpChatCompletion({ baseUrl: server.baseUrl, body, signal }, (part) => {
    parts.push(part);
    onPart?.(part, parts);
  });
  const error = await stream.done.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { parts, error, stream };
}

async function endlessUpstream(): Promise<TestUpstream> {
  upstream = await startEndlessUpstream();
  return upstream;
}

describe('pumpChatCompletion (the push-based stream the gateway consumes)', () => {
  it('pushes the same parts as the async iterable, whatever the reads, and resolves after `end`', async () => {
    const cases: Array<[string, number[]]> = [
      [plainContentStream, []],
      [plainContentStream, [1, 7, 40, 41, 42, 200]],
      [toolCallStream, []],
      [reasoningStream, [3, 90]],
      [reframedStream, [3, 40, 200, 260]],
    ];
    for (const [text, cuts] of cases) {
      const server = await serve(text, cuts);
      const pulled = await collect(streamChatCompletion({ baseUrl: server.baseUrl, body, signal: new AbortController().signal }));
      const pushed = await pump(server);
      expect(pushed.error).toBeUndefined();
      expect(pushed.parts).toEqual(pulled.parts);
      expect(pushed.parts.at(-1)).toEqual({ type: 'end' });
      await upstream?.close();
      upstream = undefined;
    }
    expect((await pump(await serve(plainContentStream))).parts).toEqual(expectedPlainParts);
  });

  it('rejects with a mid-stream error object after the parts before it', async () => {
    const { parts, error } = await pump(await serve(midStreamErrorStream));
    expect(parts).toEqual([START, { type: 'content', text: 'Par' }]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
  });

  it('ends with what onPart threw, unchanged, and closes the upstream socket', async () => {
    const server = await endlessUpstream();
    const thrown = new Error('consumer bug');
    const { parts, error } = await pump(server, (part) => {
      if (part.type === 'content' && part.text === 't1 ') throw thrown;
    });
    expect(error).toBe(thrown);
    expect(parts.at(-1)).toEqual({ type: 'content', text: 't1 ' });
    await server.requestSocketClosed(0);
  });

  it('abort() from inside onPart delivers nothing more, even parts of the same read, and closes the socket', async () => {
    // Three tokens in one write: one read carries them all.
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }) + vllmChunk({ content: 'b' }) + vllmChunk({ content: 'c' }));
    });
    const reason = new Error('rejected at a');
    let stream: ReturnType<typeof pumpChatCompletion> | undefined;
    const parts: UpstreamPart[] = [];
    stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal }, (part) => {
      parts.push(part);
      if (part.type === 'content') stream?.abort(reason);
    });
    await expect(stream.done).rejects.toBe(reason);
    expect(stream.interrupted).toBe(true);
    expect(parts).toEqual([START, { type: 'content', text: 'a' }]);
    await upstream.requestSocketClosed(0);
  });

  it("rejects with the signal's reason when the caller aborts, and sends nothing when it already has", async () => {
    const server = await endlessUpstream();
    const controller = new AbortController();
    const reason = new ClientAbortedError();
    const { parts, error } = await pump(server, (_part, seen) => seen.length === 3 && controller.abort(reason), controller.signal);
    expect(error).toBe(reason);
    expect(parts).toHaveLength(3);
    await server.requestSocketClosed(0);

    const before = server.requests.length;
    const { error: early } = await pump(server, undefined, AbortSignal.abort(reason));
    expect(early).toBe(reason);
    expect(server.requests.length).toBe(before);
  });

  it('holds parts back while paused and hands them over in order on resume', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }));
      await pause(20);
      res.write(vllmChunk({ content: 'b' }) + vllmChunk({ content: 'c' }));
      res.end(vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts: UpstreamPart[] = [];
    const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal }, (part) => {
      parts.push(part);
      if (part.type === 'content' && part.text === 'a') stream.pause();
    });
    while (parts.length < 2) await pause(5);
    await pause(100);
    expect(parts).toEqual([START, { type: 'content', text: 'a' }]);
    stream.resume();
    await stream.done;
    expect(parts.slice(2)).toEqual([{ type: 'content', text: 'b' }, { type: 'content', text: 'c' }, { type: 'finish', reason: 'stop' }, { type: 'end' }]);
  });

  it('finishes the delivery under way first when onPart pauses and resumes at once: no part twice', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }));
      await pause(20);
      // Several events in one read: handed over from the held list.
      res.end(['b', 'c', 'd'].map((text) => vllmChunk({ content: text })).join('') + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts: UpstreamPart[] = [];
    const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal }, (part) => {
      parts.push(part);
      if (part.type === 'content') {
        stream.pause();
        stream.resume();
      }
    });
    await stream.done;
    expect(parts.map((p) => (p.type === 'content' ? p.text : p.type))).toEqual(['start', 'a', 'b', 'c', 'd', 'finish', 'end']);
  });

  it('holds the end back from a consumer that paused after [DONE], though the upstream keeps the response open', async () => {
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts: UpstreamPart[] = [];
    const timeouts = { connectMs: 60_000, headersMs: 60_000, firstTokenMs: 60_000, idleMs: 60_000 };
    const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts }, (part) => parts.push(part));
    while (!parts.some((p) => p.type === 'finish')) await pause(5);
    // [DONE] came with the finish: paused from outside now, past the after-[DONE] grace (250 ms).
    stream.pause();
    await pause(500);
    expect(parts.map((p) => p.type)).toEqual(['start', 'content', 'finish']);
    stream.resume();
    await stream.done;
    expect(parts.map((p) => p.type)).toEqual(['start', 'content', 'finish', 'end']);
  });

  it('ends soon after [DONE] when the upstream keeps the response open, and closes that socket', async () => {
    // idleMs is far beyond the test's own timeout: only [DONE] can end this stream in time.
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'a' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const parts: UpstreamPart[] = [];
    const timeouts = { connectMs: 60_000, headersMs: 60_000, firstTokenMs: 60_000, idleMs: 60_000 };
    const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts }, (part) =>
      parts.push(part),
    );
    await stream.done;
    expect(parts.map((p) => p.type)).toEqual(['start', 'content', 'finish', 'end']);
    await upstream.requestSocketClosed(0);
  });

  it('says once, before any part, that the upstream accepted the request; not when it refused it', async () => {
    const server = await serve(plainContentStream);
    const seen: string[] = [];
    const signal = new AbortController().signal;
    await pumpChatCompletion({ baseUrl: server.baseUrl, body, signal, onAccepted: () => seen.push('accepted') }, (part) => seen.push(part.type)).done;
    expect(seen).toEqual(['accepted', ...expectedPlainParts.map((p) => p.type)]);

    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(modelNotFoundBody));
    });
    const refused: string[] = [];
    const stream = pumpChatCompletion({ baseUrl: upstream.baseUrl, body, signal, onAccepted: () => refused.push('accepted') }, () => {});
    await expect(stream.done).rejects.toBeInstanceOf(UpstreamResponseError);
    expect(refused).toEqual([]);
    await server.close();
  });

  it('ends with what onAccepted threw, delivering no part', async () => {
    const server = await serve(plainContentStream);
    const thrown = new Error('could not open the response');
    const onAccepted = (): void => {
      throw thrown;
    };
    const parts: UpstreamPart[] = [];
    const stream = pumpChatCompletion({ baseUrl: server.baseUrl, body, signal: new AbortController().signal, onAccepted }, (part) => parts.push(part));
    await expect(stream.done).rejects.toBe(thrown);
    expect(parts).toEqual([]);
  });

  it('times out an upstream that stalls between tokens', async () => {
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'Hel' }));
    });
    const stream = pumpChatCompletion(
      { baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts: { idleMs: 150 } },
      () => {},
    );
    await expect(stream.done).rejects.toBeInstanceOf(UpstreamIdleTimeoutError);
    expect(stream.interrupted).toBe(true);
  });
});

describe('createChatCompletionPump (one upstream, many streams)', () => {
  it('checks each request body, unless the caller says it has', async () => {
    const server = await serve(plainContentStream);
    const checked = createChatCompletionPump({ baseUrl: server.baseUrl });
    const signal = new AbortController().signal;
    expect(() => checked({ body: { model: MODEL, messages: [] }, signal }, () => {})).toThrow(InvalidRequestError);

    const trusted = createChatCompletionPump({ baseUrl: server.baseUrl }, { requestsValidated: true });
    const parts: UpstreamPart[] = [];
    await trusted({ body: { ...body, extra_field: 1 }, signal }, (part) => parts.push(part)).done;
    expect(parts).toEqual(expectedPlainParts);
    expect(server.requests[0]!.body).toMatchObject({ ...body, extra_field: 1, stream: true, stream_options: { include_usage: true } });
  });

  it('reaches the same endpoint for each spelling of a base URL, query string kept', async () => {
    const server = await serve(plainContentStream);
    const signal = new AbortController().signal;
    for (const baseUrl of [server.baseUrl, `${server.baseUrl}/`, `${server.baseUrl}//?api-version=2024-06-01`, server.baseUrl]) {
      await createChatCompletionPump({ baseUrl })({ body, signal }, () => {}).done;
    }
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/chat/completions?api-version=2024-06-01',
      '/v1/chat/completions',
    ]);
  });
});
