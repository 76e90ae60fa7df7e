import { createServer } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  InvalidRequestError,
  UpstreamConnectionError,
  UpstreamProtocolError,
  UpstreamResponseError,
} from '../../core/errors.ts';
import { closeUpstreamPools, streamChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import { ERROR_BODY_WAIT_MS } from '../../llm-client/upstream-response-error.ts';
import {
  contextLengthErrorBody,
  expectedPlainParts,
  midStreamErrorStream,
  MODEL,
  modelNotFoundBody,
  plainContentStream,
  plainContentText,
  reasoningStream,
  reframedStream,
  START,
  toolCallStream,
  vllmChunk,
} from './fixtures/vllm-streams.ts';
import { collect, sseHeaders, startSseUpstream, startTestUpstream, type TestUpstream, writeInPieces } from './upstream-test-server.ts';

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

function stream(server: TestUpstream, extra: Record<string, unknown> = {}) {
  return collect(streamChatCompletion({ baseUrl: server.baseUrl, body: { ...body, ...extra }, signal: new AbortController().signal }));
}

const contentOf = (parts: UpstreamPart[]) => parts.flatMap((p) => (p.type === 'content' ? [p.text] : [])).join('');

describe('streamChatCompletion over HTTP', () => {
  it('streams plain content, finish, usage and end, and forces streaming with usage', async () => {
    const server = await serve(plainContentStream);
    const result = await collect(
      streamChatCompletion({
        baseUrl: `${server.baseUrl}/`,
        apiKey: 'sk-test',
        body: { ...body, temperature: 0, stream: false, stream_options: { continuous_usage_stats: false } },
        signal: new AbortController().signal,
      }),
    );
    expect(result.error).toBeUndefined();
    expect(result.parts).toEqual(expectedPlainParts);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      ...body,
      temperature: 0,
      stream: true,
      stream_options: { continuous_usage_stats: false, include_usage: true },
    });
  });

  it('streams native tool-call deltas as vLLM sends them', async () => {
    const { parts, error } = await stream(await serve(toolCallStream));
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      START,
      { type: 'tool-call-delta', index: 0, id: 'chatcmpl-tool-5d2b8f0e1a', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, arguments: '{"city": "' },
      { type: 'tool-call-delta', index: 0, arguments: 'Paris' },
      { type: 'tool-call-delta', index: 0, arguments: '"}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: { prompt_tokens: 210, completion_tokens: 19, total_tokens: 229 } },
      { type: 'end' },
    ]);
  });

  it('streams reasoning once even when both reasoning fields carry it', async () => {
    const { parts } = await stream(await serve(reasoningStream));
    expect(parts.filter((p) => p.type === 'reasoning' || p.type === 'content')).toEqual([
      { type: 'reasoning', text: 'The user wants', field: 'reasoning' },
      { type: 'reasoning', text: ' a number.', field: 'reasoning' },
      { type: 'content', text: '42' },
    ]);
  });

  it('decodes events split across TCP writes at odd byte offsets, inside multi-byte characters', async () => {
    const bytes = Buffer.from(plainContentStream, 'utf8');
    const emoji = bytes.indexOf(Buffer.from('👋'));
    const umlaut = bytes.indexOf(Buffer.from('ü'));
    const cuts = [1, 7, umlaut + 1, emoji + 1, emoji + 3, bytes.indexOf(Buffer.from('你')) + 2, bytes.length - 3];
    const { parts, error } = await stream(await serve(plainContentStream, cuts.sort((a, b) => a - b)));
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
  });

  it('decodes multi-line data, CRLF framing and keep-alive comments', async () => {
    const { parts, error } = await stream(await serve(reframedStream, [3, 40, 200, 260]));
    expect(error).toBeUndefined();
    expect(contentOf(parts)).toBe(plainContentText);
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });

  it('ends at a clean EOF without [DONE]', async () => {
    const { parts, error } = await stream(await serve(vllmChunk({ content: 'ok' }) + vllmChunk({}, 'length')));
    expect(error).toBeUndefined();
    expect(parts.slice(1)).toEqual([{ type: 'content', text: 'ok' }, { type: 'finish', reason: 'length' }, { type: 'end' }]);
  });

  it('throws UpstreamResponseError for an error object mid-stream, after the parts before it', async () => {
    const { parts, error } = await stream(await serve(midStreamErrorStream));
    expect(parts).toEqual([START, { type: 'content', text: 'Par' }]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 500, message: 'CUDA out of memory while decoding', code: 'upstream_response_error' });
  });

  it.each([
    [400, contextLengthErrorBody, contextLengthErrorBody.error.message, 'max_tokens'],
    [404, modelNotFoundBody, modelNotFoundBody.message, 'model'],
    // FastAPI's validation list (SGLang's routes), read as one line per field, not its JSON, which quotes the body back.
    [422, { detail: [{ loc: ['body', 'messages'], msg: 'field required', input: { model: 'm' } }, { loc: ['body', 'n'], msg: 'too big' }] }, 'messages: field required; n: too big', 'messages'],
  ])('throws UpstreamResponseError with the message of a %i OpenAI/vLLM error body', async (status, errorBody, message, param) => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody));
    });
    const { parts, error } = await stream(upstream);
    expect(parts).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status, message, param });
  });

  it.each([
    ['an unknown model', 404, modelNotFoundBody, { code: 'model_not_found', param: 'model' }],
    ['a 404 about something else', 404, { detail: 'Not Found' }, { code: 'upstream_response_error', param: null }],
    ["a FastAPI location as param", 400, { error: { message: '1 validation error', type: 'BadRequestError', param: 'body.seed', code: 400 } }, { code: 'upstream_response_error', param: 'seed' }],
    ['the whole body as param', 400, { error: { message: 'Value error, …', type: 'BadRequestError', param: 'body', code: 400 } }, { code: 'upstream_response_error', param: null }],
  ])('gives %s OpenAI\'s code and param', async (_what, status, errorBody, expected) => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody));
    });
    const { error } = await stream(upstream);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status, ...expected });
  });

  it('reports a plain-text error body as the message', async () => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream overloaded\n');
    });
    expect((await stream(upstream)).error).toMatchObject({ status: 503, message: 'upstream overloaded' });
  });

  it('keeps the status of an error answer whose body is held open, and quotes what came of it (regression: a first-token timeout, status lost)', async () => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.write('upstream is restarting');
    });
    const timeouts = { firstTokenMs: ERROR_BODY_WAIT_MS + 3000 };
    const { error } = await collect(streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal, timeouts }));
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 502, message: 'upstream is restarting' });
  });

  it("reports an HTML error page (a proxy's, a web server's) as its text, in one short line", async () => {
    const page =
      '<!DOCTYPE HTML>\n<html><head><title>Error response</title><style>body { color: red }</style></head>\n<body><h1>Error response</h1>\n' +
      `<p>Error code: 404</p><p>Message: File not found.</p>${'<p>padding</p>'.repeat(200)}</body></html>\n`;
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end(page);
    });
    const { error } = await stream(upstream);
    expect(error).toMatchObject({ status: 404 });
    const message = (error as Error).message;
    expect(message.startsWith('Error response Error response Error code: 404 Message: File not found. padding')).toBe(true);
    expect(message).not.toMatch(/[<>]|color: red/);
    expect(message.length).toBeLessThanOrEqual(301);
  });

  it('refuses a 200 that is not an event stream, and one that sends no chunk', async () => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}');
    });
    expect((await stream(upstream)).error).toBeInstanceOf(UpstreamProtocolError);
    await upstream.close();
    const { error } = await stream(await serve(': only a comment\n\n'));
    expect(error).toBeInstanceOf(UpstreamProtocolError);
  });

  it("says what a 200 that is not an event stream said: a proxy's login page by its text, a JSON error by its message", async () => {
    const page = '<!doctype html><html><head><title>Sign in</title><script>var x = 1;</script></head><body><h1>Sign in to Example Access</h1></body></html>';
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    const html = (await stream(upstream)).error as Error;
    expect(html).toBeInstanceOf(UpstreamProtocolError);
    // Before: only 'upstream answered text/html; charset=utf-8, not text/event-stream'.
    expect(html.message).toBe('upstream answered text/html; charset=utf-8, not text/event-stream: Sign in Sign in to Example Access');
    await upstream.close();
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'error', message: 'The model is still loading', type: 'ServiceUnavailable', code: 503 }));
    });
    expect((await stream(upstream)).error).toMatchObject({ message: 'upstream answered application/json, not text/event-stream: The model is still loading' });
    await upstream.close();
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end();
    });
    expect((await stream(upstream)).error).toMatchObject({ message: 'upstream answered application/json, not text/event-stream' });
  });

  it('throws UpstreamConnectionError when the upstream drops the connection mid-stream', async () => {
    upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      await writeInPieces(res, Buffer.from(vllmChunk({ content: 'half' })), []);
      res.socket?.destroy();
    });
    const { parts, error } = await stream(upstream);
    expect(parts).toEqual([START, { type: 'content', text: 'half' }]);
    expect(error).toBeInstanceOf(UpstreamConnectionError);
  });

  it('throws UpstreamConnectionError when nothing listens on the port', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { error } = await collect(
      streamChatCompletion({ baseUrl: `http://127.0.0.1:${port}/v1`, body, signal: new AbortController().signal }),
    );
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('reuses one keep-alive connection for consecutive streams to the same upstream', async () => {
    const server = await serve(plainContentStream);
    for (let i = 0; i < 3; i++) {
      expect((await stream(server)).parts.at(-1)).toEqual({ type: 'end' });
      // undici hands the socket back to the pool just after the body ends; a new round (which
      // always follows tool work) would not start in that same tick.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(server.requests).toHaveLength(3);
    expect(server.connections()).toBe(1);
  });

  it('validates options at the edge, synchronously', () => {
    const signal = new AbortController().signal;
    const call = (options: unknown) => () => streamChatCompletion(options as Parameters<typeof streamChatCompletion>[0]);
    expect(call({ baseUrl: 'ftp://x/v1', body, signal })).toThrow(InvalidRequestError);
    expect(call({ baseUrl: 'http://127.0.0.1:1/v1', body: { ...body, n: 2 }, signal })).toThrow(InvalidRequestError);
    expect(call({ baseUrl: 'http://127.0.0.1:1/v1', body: { messages: [] }, signal })).toThrow(InvalidRequestError);
    expect(call({ baseUrl: 'http://127.0.0.1:1/v1', body, signal, timeouts: { idleMs: 0 } })).toThrow(/timeouts\.idleMs/);
    expect(call({ baseUrl: 'http://127.0.0.1:1/v1', body })).toThrow(InvalidRequestError);
  });
});
