import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';

type Line = Record<string, unknown>;

const scripted = scriptedGateway();

/** A real gateway logging into `lines` at info, over an upstream that answers every chat with "Hello there." as a stream. */
async function loggedGateway(config = {}) {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text) as Line) });
  const gw = await scripted.start(
    (_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hello there.' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    },
    { logger },
    config,
  );
  return { gw, lines };
}

/** One exchange on `agent`'s one kept-alive socket; resolves once its answer has been read whole. */
function exchange(agent: Agent, port: number, method: string, path: string, body?: unknown): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ agent, port, host: '127.0.0.1', method, path, headers: payload === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, socket }));
    });
    let socket: Socket;
    req.on('socket', (s) => (socket = s));
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the access line counts the bytes of its request and response', () => {
  it('per response on a kept-alive connection: a JSON error, an SSE stream and a JSON completion, each its own bytes', async () => {
    const { gw, lines } = await loggedGateway();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ask = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] };
    const client: Array<{ read: number; written: number }> = [];
    const sockets = new Set<Socket>();
    const statuses: number[] = [];
    for (const [method, path, body] of [
      ['GET', '/nothing-here', undefined],
      ['POST', '/v1/chat/completions', { ...ask, stream: true }],
      ['POST', '/v1/chat/completions', ask],
    ] as const) {
      const { status, socket } = await exchange(agent, gw.port, method, path, body);
      statuses.push(status);
      sockets.add(socket);
      // Cumulative on the one socket: what the client wrote and read up to the end of each answer.
      client.push({ read: socket.bytesRead, written: socket.bytesWritten });
    }
    agent.destroy();
    expect(statuses).toEqual([404, 200, 200]);
    expect(sockets.size).toBe(1);
    await expect.poll(() => lines.length).toBe(3);
    const perExchange = client.map((c, i) => ({ sent: c.read - (client[i - 1]?.read ?? 0), received: c.written - (client[i - 1]?.written ?? 0) }));
    expect(lines.map((l) => ({ sent: l.bytes_sent, received: l.bytes_received }))).toEqual(perExchange);
    // The stream's framing and events are in it: far more than its head.
    expect(perExchange[1]!.sent).toBeGreaterThan(500);
  });

  it('per response when a client pipelines two requests: the second counts only its own answer', async () => {
    const { gw, lines } = await loggedGateway();
    const socket = connect(gw.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write('GET /nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /nothing-there HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    const raw = Buffer.concat(chunks).toString('latin1');
    // Each answer's length: its head, the blank line and its declared body.
    const answers = [...raw.matchAll(/HTTP\/1\.1 [^]*?\r\n\r\n/g)].map((m) => Buffer.byteLength(m[0], 'latin1') + Number(/content-length: (\d+)/i.exec(m[0])![1]));
    expect(answers).toHaveLength(2);
    expect(answers[0]! + answers[1]!).toBe(Buffer.concat(chunks).length);
    await expect.poll(() => lines.length).toBe(2);
    expect(lines.map((l) => [l.path, l.bytes_sent])).toEqual([
      ['/nothing-here', answers[0]],
      ['/nothing-there', answers[1]],
    ]);
  });

  it('counts the 408 the server wrote for a body late past requestMs, and the part of the body that came', async () => {
    // headersMs as long as requestMs: the headers, sent at once, have 600 ms to be read on a slow machine.
    const { gw, lines } = await loggedGateway({ clientTimeouts: { headersMs: 600, requestMs: 600 } });
    const socket = connect(gw.port, '127.0.0.1');
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":';
    socket.write(head);
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ status: 408, bytes_sent: Buffer.byteLength(answer), bytes_received: Buffer.byteLength(head) });
  });
});
