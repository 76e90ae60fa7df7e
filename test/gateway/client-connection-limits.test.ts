import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig, type GatewayHandle } from '../../gateway/server.ts';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { callThenAnswer, scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const answering = callThenAnswer({ name: 'none', arguments: {} }, () => 'done');

/** What the gateway writes back on a raw socket, until it closes it. */
async function answerOn(socket: Socket): Promise<string> {
  let answer = '';
  for await (const chunk of socket) answer += String(chunk);
  return answer;
}

function openConnections(gw: GatewayHandle): Promise<number> {
  return new Promise((resolve, reject) => gw.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

const chatBody = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });

describe("a client's connection", () => {
  it('defaults to 20 s for the headers, 2 min for the whole request and 5 s of keep-alive, shorter than Node\'s own', () => {
    const config = parseGatewayConfig({ upstream: { baseUrl: 'http://127.0.0.1:1/v1' } });
    expect(config.clientTimeouts).toEqual({ headersMs: 20_000, requestMs: 120_000, keepAliveMs: 5_000 });
    expect(config.maxConnections).toBeUndefined();
  });

  it('refuses headers allowed longer than the whole request', () => {
    expect(() => parseGatewayConfig({ upstream: { baseUrl: 'http://127.0.0.1:1/v1' }, clientTimeouts: { headersMs: 5000, requestMs: 1000 } })).toThrow(
      /clientTimeouts\.headersMs.*at most requestMs \(1000\)/,
    );
  });

  it('is answered 408 and closed when its headers do not arrive within headersMs', async () => {
    const gw = await scripted.start(answering, {}, { clientTimeouts: { headersMs: 300, requestMs: 5000 } });
    const socket = connect(gw.port, '127.0.0.1');
    // A slowloris: a request line and one header, then nothing.
    socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(await answerOn(socket)).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    await expect.poll(() => openConnections(gw)).toBe(0);
  });

  it('is answered 408 and closed when its body does not arrive within requestMs, and the gateway serves on', async () => {
    const gw = await scripted.start(answering, {}, { clientTimeouts: { headersMs: 300, requestMs: 600 } });
    const socket = connect(gw.port, '127.0.0.1');
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${chatBody.length}\r\n\r\n`);
    socket.write(chatBody.slice(0, 10));
    const answer = await answerOn(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(scripted.upstream.requests).toHaveLength(0);
    await expect.poll(() => openConnections(gw)).toBe(0);

    const next = await postJson(gw.url, '/v1/chat/completions', chatBody);
    expect(next.status).toBe(200);
  });

  it('is not cut by requestMs while its answer streams: the limit is on what the client sends', async () => {
    // requestMs 1 s for the request itself to arrive: with 400 ms a slow machine could leave its body unread that long, and answer 408.
    const gw = await scripted.start(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The answer takes longer than requestMs (2 s against 1 s, checked every 250 ms), arriving piece by piece.
      for (const piece of ['a', 'b', 'c', 'd']) {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
        await new Promise((r) => setTimeout(r, 500));
      }
      res.end(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
    }, {}, { clientTimeouts: { headersMs: 1000, requestMs: 1000 } });
    const answered = await postJson(gw.url, '/v1/chat/completions', chatBody);
    expect(answered.status).toBe(200);
    expect(answered.json.choices[0].message.content).toBe('abcd');
  });

  it('is closed after keepAliveMs idle between requests', async () => {
    const gw = await scripted.start(answering, {}, { clientTimeouts: { keepAliveMs: 200 } });
    const socket = connect(gw.port, '127.0.0.1');
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // The gateway closes it: the read ends well before Node's default (5 s) would have. Node 20 closes
    // a second after keepAliveMs (about 1.2 s here), so 4.5 s leaves a slow machine 3 s (3000 left 1.8).
    const stillOpen = new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 4500).unref());
    const answer = await Promise.race([answerOn(socket), stillOpen]);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    socket.destroy();
  });

  it('beyond maxConnections is closed as it opens, while those open are served', async () => {
    const gw = await scripted.start(answering, {}, { maxConnections: 2 });
    const held = [connect(gw.port, '127.0.0.1'), connect(gw.port, '127.0.0.1')];
    await Promise.all(held.map((s) => once(s, 'connect')));
    await expect.poll(() => openConnections(gw)).toBe(2);

    const extra = connect(gw.port, '127.0.0.1');
    extra.on('error', () => {});
    extra.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(await answerOn(extra).catch(() => '')).toBe('');

    held[0]!.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(await answerOn(held[0]!)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    held[1]!.destroy();
  });
});
