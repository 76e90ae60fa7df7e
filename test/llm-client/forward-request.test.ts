import { createServer, validateHeaderValue, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamConnectionError, UpstreamHeadersTimeoutError, UpstreamIdleTimeoutError } from '../../core/errors.ts';
import { forwardConnection, forwardRequest, type ForwardedRequest } from '../../llm-client/forward-request.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startRawDroppingUpstream } from './raw-dropping-upstream.ts';
import { pause, startTestUpstream } from './upstream-test-server.ts';

const PIECES = 200;
const RAW_DISPOSITION = Buffer.from('attachment; filename="报告-é.pdf"', 'utf8');
const RAW_LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
const piece = (i: number) => `piece ${String(i).padStart(4, '0')};`;

let server: Server;
let baseUrl: string;
let closedEarly = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/v1/pieces')) {
      // One write per piece, spread over a few turns of the loop, as a token stream arrives.
      res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
      let i = 0;
      const next = (): void => {
        for (let k = 0; k < 20 && i < PIECES; k++) res.write(piece(i++));
        if (i < PIECES) setImmediate(next);
        else res.end();
      };
      next();
      return;
    }
    if (req.url?.startsWith('/v1/raw-header-bytes')) {
      // Node writes a header string as latin1: these are the bytes of UTF-8 text and of a latin1 é.
      res.writeHead(200, { 'content-disposition': RAW_DISPOSITION.toString('latin1'), 'x-latin1': RAW_LATIN1.toString('latin1') }).end('ok');
      return;
    }
    if (req.url?.startsWith('/v1/stalls')) {
      // A head and one piece, then silence.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first');
      return;
    }
    if (req.url?.startsWith('/v1/late-head')) {
      // llama.cpp's server: the head comes with the first token, after the prefill.
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {}\n\n'), 300);
      return;
    }
    // Never answers: for aborts before the head.
    res.on('close', () => closedEarly++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterAll(closeUpstreamPools);

const get = (endpoint: string, signal: AbortSignal): ForwardedRequest => ({ method: 'GET', endpoint, query: '', headers: {}, body: null, signal });

describe('forwardRequest', () => {
  it('hands every read to the sink in order, and holds the rest while the sink asks for a pause', async () => {
    const received: Buffer[] = [];
    let head: { status: number; headers: Record<string, string | string[]> } | undefined;
    let pauses = 0;
    const exchange = forwardRequest(forwardConnection({ baseUrl }), get('/pieces', new AbortController().signal), {
      head: (status, headers) => (head = { status, headers }),
      body(chunk) {
        received.push(chunk);
        // Every third read fills the sink up; it takes more a little later.
        if (received.length % 3 !== 0) return true;
        pauses++;
        setTimeout(() => exchange.resume(), 2);
        return false;
      },
    });
    await exchange.done;
    expect(head?.status).toBe(200);
    expect(head?.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(Buffer.concat(received).toString()).toBe(Array.from({ length: PIECES }, (_, i) => piece(i)).join(''));
    expect(pauses).toBeGreaterThan(0);
  });

  it('hands on header bytes as undici and Node read them, latin1, so writing them on sends the same bytes (regression: read as UTF-8)', async () => {
    let headers: Record<string, string | string[]> = {};
    const exchange = forwardRequest(forwardConnection({ baseUrl }), get('/raw-header-bytes', new AbortController().signal), {
      head: (_status, h) => (headers = h),
      body: () => true,
    });
    await exchange.done;
    for (const [name, raw] of [['content-disposition', RAW_DISPOSITION], ['x-latin1', RAW_LATIN1]] as const) {
      const value = headers[name] as string;
      // Before: UTF-8 text past U+00FF (or U+FFFD for the latin1 byte), which a sink's writeHead refuses (ERR_INVALID_CHAR).
      expect(() => validateHeaderValue(name, value)).not.toThrow();
      expect(Buffer.from(value, 'latin1')).toEqual(raw);
    }
  });

  it("rejects with the caller's reason when it aborts before the head, and the upstream sees the connection close", async () => {
    const controller = new AbortController();
    const before = closedEarly;
    const exchange = forwardRequest(forwardConnection({ baseUrl }), get('/hangs', controller.signal), { head: () => {}, body: () => true });
    setTimeout(() => controller.abort(new Error('client left')), 50);
    await expect(exchange.done).rejects.toThrow('client left');
    await expect.poll(() => closedEarly).toBe(before + 1);
  });

  it('turns a refused connection into UpstreamConnectionError, with nothing handed to the sink', async () => {
    let touched = false;
    const exchange = forwardRequest(forwardConnection({ baseUrl: 'http://127.0.0.1:1/v1' }), get('/x', new AbortController().signal), {
      head: () => (touched = true),
      body: () => (touched = true),
    });
    await expect(exchange.done).rejects.toBeInstanceOf(UpstreamConnectionError);
    expect(touched).toBe(false);
  });

  it('names the silence it allowed when an answer stalls: the longer of firstTokenMs and idleMs', async () => {
    const timeouts = { connectMs: 5_000, headersMs: 5_000, firstTokenMs: 300, idleMs: 100 };
    const exchange = forwardRequest(forwardConnection({ baseUrl, timeouts }), get('/stalls', new AbortController().signal), { head: () => {}, body: () => true });
    await expect(exchange.done).rejects.toBeInstanceOf(UpstreamIdleTimeoutError);
    await expect(exchange.done).rejects.toThrow(/more than 300 ms/);
  });

  it('waits for the head as a chat stream does, the longer of headersMs and firstTokenMs, and names that wait (regression: it failed at headersMs)', async () => {
    const sink = { head: () => {}, body: () => true };
    const late = { connectMs: 5_000, headersMs: 100, firstTokenMs: 5_000, idleMs: 5_000 };
    await forwardRequest(forwardConnection({ baseUrl, timeouts: late }), get('/late-head', new AbortController().signal), sink).done;

    const never = { connectMs: 5_000, headersMs: 100, firstTokenMs: 200, idleMs: 100 };
    const exchange = forwardRequest(forwardConnection({ baseUrl, timeouts: never }), get('/hangs', new AbortController().signal), sink);
    await expect(exchange.done).rejects.toBeInstanceOf(UpstreamHeadersTimeoutError);
    await expect(exchange.done).rejects.toThrow(/within 200 ms/);
  });
});

describe('forwardRequest on a pooled keep-alive socket the server already closed (regression: it failed the request or rested the replica)', () => {
  /** Answers the first request on each connection; closes the connection when a second one comes on it. */
  async function staleKeepAliveUpstream() {
    const served = new WeakSet<Socket>();
    const upstream = await startTestUpstream((req, res) => {
      if (served.has(req.socket)) return void req.socket.destroy();
      served.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    return upstream;
  }

  const post = (body: ForwardedRequest['body']): ForwardedRequest => ({
    method: 'POST',
    endpoint: '/embeddings',
    query: '',
    headers: { 'content-type': 'application/json' },
    body,
    signal: new AbortController().signal,
  });

  async function forwardTwice(second: ForwardedRequest['body']) {
    const upstream = await staleKeepAliveUpstream();
    try {
      const connection = forwardConnection({ baseUrl: upstream.baseUrl });
      await forwardRequest(connection, post(Buffer.from('{"input":"a"}')), { head: () => {}, body: () => true }).done;
      // undici hands the socket back to its pool in a later turn of the loop.
      await pause(20);
      const statuses: number[] = [];
      const error = await forwardRequest(connection, post(second), { head: (status) => statuses.push(status), body: () => true }).done.then(
        () => undefined,
        (e: unknown) => e,
      );
      return { error, statuses, requests: upstream.requests.length, connections: upstream.connections() };
    } finally {
      await upstream.close();
    }
  }

  it('sends a body it holds once more, on a new connection', async () => {
    expect(await forwardTwice(Buffer.from('{"input":"b"}'))).toEqual({ error: undefined, statuses: [200], requests: 3, connections: 2 });
  });

  it('does not send again a request dropped on a new connection: that server is failing, not stale (regression: it went twice)', async () => {
    const dropper = await startRawDroppingUpstream({ fate: () => 'close', sse: '' });
    try {
      const connection = forwardConnection({ baseUrl: dropper.baseUrl });
      const error = await forwardRequest(connection, post(Buffer.from('{"input":"a"}')), { head: () => {}, body: () => true }).done.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UpstreamConnectionError);
      expect((error as Error).message).toContain(`upstream ${dropper.baseUrl} failed: `);
      expect([dropper.requests.length, dropper.connections()]).toEqual([1, 1]);
    } finally {
      await dropper.close();
    }
  });

  it('does not send a streamed body again: it was read once already', async () => {
    const { error, statuses, requests } = await forwardTwice(Readable.from([Buffer.from('{"input":"b"}')]));
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(statuses).toEqual([]);
    expect(requests).toBe(2);
  });
});
