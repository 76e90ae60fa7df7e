import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { MAX_FOLLOWERS_PER_REQUEST } from '../../gateway/request-events-socket.ts';
import { startGateway } from '../../gateway/server.ts';
import { Timeline, type TimelineEvent } from '../../gateway/timeline.ts';
import { getJson } from '../support/sse-client.ts';
import { SINE_STDLIB_REQUEST, startTestConveyor } from '../support/conveyor-fixture.ts';

const wsUrl = (httpUrl: string, id: string) => `${httpUrl.replace(/^http/, 'ws')}/v1/requests/${id}/events`;

/** Every message until the server closes, with the close code and reason. */
async function follow(url: string, onEvent: (e: TimelineEvent) => void = () => {}): Promise<{ events: TimelineEvent[]; code: number; reason: string }> {
  const ws = new WebSocket(url);
  const events: TimelineEvent[] = [];
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as TimelineEvent;
    events.push(event);
    onEvent(event);
  });
  const [code, reason] = (await once(ws, 'close')) as [number, Buffer];
  return { events, code, reason: String(reason) };
}

/** The upgrade's refusal: its HTTP status and JSON body. */
async function refusal(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { error: { code: string; message: string } } }> {
  const ws = new WebSocket(url, { headers });
  // Terminating a refused socket reports "closed before the connection was established".
  ws.on('error', () => {});
  const [, res] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
  let text = '';
  for await (const chunk of res) text += String(chunk);
  ws.terminate();
  return { status: res.statusCode ?? 0, body: JSON.parse(text) };
}

/** The next HTTP/1.1 response on `socket` (content-length bodies only): status and body. */
function nextResponse(socket: Socket): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
      if (buffered.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ status: Number(head.split(' ')[1]), body: buffered.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

describe('GET /v1/requests/:id/events (WebSocket)', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor();
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('replays what the request has had, then sends each event as it happens, and closes after request-end', async () => {
    const log: string[] = [];
    const res = await fetch(`${conveyor.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...SINE_STDLIB_REQUEST, stream: true }),
    });
    const id = res.headers.get('x-conveyor-request-id')!;
    expect(id).toMatch(/^chatcmpl-/);
    const followed = follow(wsUrl(conveyor.gateway.url, id), (e) => log.push(`ws:${e.type}`));
    const body = await res.text();
    log.push('client:done');
    const { events, code, reason } = await followed;

    expect(body).toContain('data: [DONE]');
    expect(code).toBe(1000);
    expect(reason).toBe('request ended');
    expect(events[0]?.type).toBe('request-start');
    expect(events.at(-1)?.type).toBe('request-end');
    // Live, not a replay at the end: the python tool's results reached the follower while the
    // client was still reading the model's second round.
    expect(log.indexOf('ws:tool-end')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('ws:tool-end')).toBeLessThan(log.indexOf('client:done'));
    // Nothing lost or duplicated between the replay and the live part.
    const timeline = (await getJson(conveyor.gateway.url, `/v1/requests/${id}/timeline`)).json as { events: TimelineEvent[] };
    expect(events).toEqual(timeline.events);
  });

  it('replays a finished request whole and closes', async () => {
    const res = await fetch(`${conveyor.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: SINE_STDLIB_REQUEST.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const id = res.headers.get('x-conveyor-request-id')!;
    await res.json();
    const { events, code } = await follow(wsUrl(conveyor.gateway.url, id));
    expect(code).toBe(1000);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['request-start', 'round-start', 'first-token', 'round-end', 'request-end']));
    expect(events.at(-1)?.type).toBe('request-end');
  });

  it('refuses an unknown request id and other paths with a 404 in the OpenAI error shape', async () => {
    const unknown = await refusal(wsUrl(conveyor.gateway.url, 'chatcmpl-nope'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('chatcmpl-nope');
    const elsewhere = await refusal(`${conveyor.gateway.url.replace(/^http/, 'ws')}/v1/chat/completions`);
    expect(elsewhere.status).toBe(404);
    // The gateway serves on after refusing upgrades.
    expect((await getJson(conveyor.gateway.url, '/health')).status).toBe(200);
  });

  it('serves a request asking for h2c (as curl --http2 does) as plain HTTP/1.1, body and keep-alive included', async () => {
    const { hostname, port } = new URL(conveyor.gateway.url);
    const socket = connect(Number(port), hostname);
    try {
      const body = JSON.stringify({ model: SINE_STDLIB_REQUEST.model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n` +
          `HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const chat = await nextResponse(socket);
      expect(chat.status).toBe(200);
      expect(JSON.parse(chat.body)).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: 'length' }] });
      // The same connection serves on.
      socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
      const health = await nextResponse(socket);
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body).status).toBe('ok');
    } finally {
      socket.destroy();
    }
  });
});

describe('request events with API keys', () => {
  it('refuses another method with 405 and Allow, and a version it does not speak with 400 naming those it does (RFC 6455)', async () => {
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    try {
      const timeline = new Timeline('chatcmpl-live');
      gateway.timelines.add(timeline);
      const handshake = (method: string, version: string) =>
        `${method} /v1/requests/chatcmpl-live/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: ${version}\r\n\r\n`;
      const raw = async (text: string) => {
        const socket = connect(gateway.port, '127.0.0.1');
        socket.write(text);
        let answer = '';
        for await (const chunk of socket) answer += String(chunk);
        return answer;
      };
      const post = await raw(handshake('POST', '13'));
      expect(post).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
      expect(post).toMatch(/\r\nallow: GET\r\n/i);
      const old = await raw(handshake('GET', '7'));
      expect(old).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(old).toMatch(/\r\nsec-websocket-version: 13, 8\r\n/i);
      expect(old).toContain('Sec-WebSocket-Version 7 is not one this server speaks');
    } finally {
      await gateway.close();
    }
  });

  it('closes a follower that reads nothing once its unsent events pass the bound, rather than holding them all', async () => {
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    try {
      const timeline = new Timeline('chatcmpl-long');
      gateway.timelines.add(timeline);
      const ws = new WebSocket(wsUrl(gateway.url, 'chatcmpl-long'));
      await once(ws, 'open');
      // Stops reading its socket: what the gateway sends piles up in the kernel, then in the gateway.
      ws.pause();
      let received = 0;
      ws.on('message', () => (received += 1));
      const closed = once(ws, 'close');
      const big = 'x'.repeat(100_000);
      for (let i = 0; i < 400; i++) timeline.mark('piece', { round: 1, detail: big });
      ws.resume();
      const [code, reason] = (await closed) as [number, Buffer];
      expect(code).toBe(1008);
      expect(String(reason)).toMatch(/^follower too slow/);
      // 40 MB marked; it was sent up to the bound (plus what the kernel took), not all of it.
      expect(received).toBeLessThan(400);
      timeline.mark('request-end', { detail: 'answer' });
    } finally {
      await gateway.close();
    }
  });

  it('refuses one follower past the per-request bound with a 429, and takes one again once another leaves', async () => {
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    const open: WebSocket[] = [];
    try {
      const timeline = new Timeline('chatcmpl-watched');
      gateway.timelines.add(timeline);
      const url = wsUrl(gateway.url, 'chatcmpl-watched');
      for (let i = 0; i < MAX_FOLLOWERS_PER_REQUEST; i++) {
        const ws = new WebSocket(url);
        open.push(ws);
        await once(ws, 'open');
      }
      const refused = await refusal(url);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('too_many_followers');
      expect(refused.body.error.message).toContain('/v1/requests/chatcmpl-watched/timeline');
      // Another request's followers are counted apart.
      const other = new Timeline('chatcmpl-other');
      gateway.timelines.add(other);
      const elsewhere = new WebSocket(wsUrl(gateway.url, 'chatcmpl-other'));
      open.push(elsewhere);
      await once(elsewhere, 'open');

      const leaving = open.shift()!;
      leaving.close();
      await once(leaving, 'close');
      // The server's side of the socket closes a moment after the client's close frame.
      await expect.poll(async () => {
        const ws = new WebSocket(url);
        ws.on('error', () => {});
        const [event] = await Promise.race([once(ws, 'open').then(() => ['open']), once(ws, 'unexpected-response').then(() => ['refused'])]);
        if (event === 'open') open.push(ws);
        else ws.terminate();
        return event;
      }).toBe('open');
      // All still live: the last event reaches every follower.
      const ends = open.map((ws) => once(ws, 'close'));
      timeline.mark('request-end', { detail: 'answer' });
      other.mark('request-end', { detail: 'answer' });
      expect(((await Promise.all(ends)) as [number][]).map(([code]) => code)).toEqual(open.map(() => 1000));
    } finally {
      for (const ws of open) ws.terminate();
      await gateway.close();
    }
  });

  it('counts a handshake ws refuses only until its socket closes: refused ones do not use up the bound', async () => {
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    try {
      const timeline = new Timeline('chatcmpl-probed');
      gateway.timelines.add(timeline);
      // No Sec-WebSocket-Key: past the gateway's own checks (counted), then refused by ws.
      const bad = `GET /v1/requests/chatcmpl-probed/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`;
      for (let i = 0; i < MAX_FOLLOWERS_PER_REQUEST + 8; i++) {
        const socket = connect(gateway.port, '127.0.0.1');
        socket.write(bad);
        let answer = '';
        for await (const chunk of socket) answer += String(chunk);
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      }
      const ws = new WebSocket(wsUrl(gateway.url, 'chatcmpl-probed'));
      await once(ws, 'open');
      ws.terminate();
    } finally {
      await gateway.close();
    }
  });

  it('asks for the same bearer key as the HTTP routes', async () => {
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, apiKeys: ['k-1'] }, { tools: new Map() });
    try {
      const url = wsUrl(gateway.url, 'chatcmpl-none');
      expect((await refusal(url)).status).toBe(401);
      // With the key the request is checked next: this one does not exist.
      expect((await refusal(url, { authorization: 'Bearer k-1' })).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });
});
