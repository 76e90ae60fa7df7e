import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { startEndlessUpstream, type TestUpstream } from '../llm-client/upstream-test-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const REPLY = 'A long answer, one token at a time, so that the stream is still open when the gateway is told to stop. '.repeat(4).trim();
const body = { model: SIM_MODEL, scenario: 'long', stream: true, messages: [{ role: 'user', content: 'Tell me.' }] };

let gateway: GatewayHandle | undefined;
let sim: SimHandle | undefined;
let endless: TestUpstream | undefined;
afterEach(async () => {
  await gateway?.close();
  await sim?.close();
  await endless?.close();
  gateway = sim = endless = undefined;
});

/** The raw bytes of one keep-alive connection, so a second request can follow on it at a chosen moment. */
function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const waiters: Array<{ test: (t: string) => boolean; resolve: () => void }> = [];
  socket.on('data', (b: Buffer) => {
    text += b.toString('utf8');
    for (const w of waiters.splice(0)) (w.test(text) ? w.resolve : () => waiters.push(w))();
  });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    send: (request: string) => socket.write(request),
    until: (test: (t: string) => boolean) => new Promise<void>((resolve) => (test(text) ? resolve() : waiters.push({ test, resolve }))),
    ended,
    text: () => text,
  };
}

/** A gateway in front of an upstream that never ends its stream, and one stream through it. */
async function streamWithoutEnd() {
  endless = await startEndlessUpstream();
  gateway = await startGateway({ port: 0, upstream: { baseUrl: endless.baseUrl } }, { tools: new Map() });
  let firstChunk!: () => void;
  const gotChunk = new Promise<void>((resolve) => (firstChunk = resolve));
  const streaming = streamChat(gateway.url, { model: 'm', messages: [{ role: 'user', content: 'go on forever' }] }, (c) => c.choices?.[0]?.delta.content && firstChunk());
  return { streaming, gotChunk };
}

describe('graceful shutdown: close({ graceMs })', () => {
  it('lets the stream in flight finish, answers a new request on its connection 503, and refuses new connections', async () => {
    sim = await startSim({ profile: E2E_PROFILE, scenarios: [{ name: 'long', rules: [{ when: { explicit: true }, reply: REPLY }] }] });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
    const conn = rawConnection(gateway.port);
    const json = JSON.stringify(body);
    conn.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    await conn.until((t) => t.includes('"content":"A"'));

    // Closing starts while the stream is at its first token; the stream then finishes on its own.
    const closing = gateway.close({ graceMs: 20_000 });
    conn.send('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await expect(fetch(`${gateway.url}/health`)).rejects.toThrow();
    await closing;
    await conn.ended;

    const [first, second] = conn.text().split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).toContain('data: [DONE]');
    // Every token made it: the streamed deltas add up to the whole reply.
    const content = [...first!.matchAll(/"content":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('');
    expect(content).toBe(REPLY);
    expect(second).toMatch(/^HTTP\/1\.1 503/);
    expect(second!.toLowerCase()).toContain('connection: close');
  });

  it('cuts what is still running when the grace period ends, telling each client so: an error chunk and [DONE], or a 503', async () => {
    const { streaming, gotChunk } = await streamWithoutEnd();
    const whole = postJson(gateway!.url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'all at once, forever' }] });
    await gotChunk;
    await eventually(() => endless!.requests.length === 2, 'both requests reach the upstream');
    await gateway!.close({ graceMs: 200 });
    gateway = undefined;

    const streamed = await streaming;
    expect(streamed.status).toBe(200);
    expect(streamed.chunks.at(-1)?.error).toMatchObject({ code: 'gateway_shutting_down', message: expect.stringContaining('grace period ran out') });
    expect(streamed.done).toBe(true);
    const answered = await whole;
    expect(answered.status).toBe(503);
    expect(answered.json.error).toMatchObject({ code: 'gateway_shutting_down', type: 'server_error' });
    await endless!.requestSocketClosed(0);
    await endless!.requestSocketClosed(1);
  });

  it('turns away what still waits for a place (--max-concurrent-requests) when the grace runs out, instead of sending it upstream', async () => {
    endless = await startEndlessUpstream();
    gateway = await startGateway({ port: 0, upstream: { baseUrl: endless.baseUrl }, maxConcurrentRequests: 1 }, { tools: new Map() });
    const url = gateway.url;
    const running = streamChat(url, { model: 'm', messages: [{ role: 'user', content: 'go on forever' }] });
    await eventually(() => endless!.requests.length === 1, 'the first stream reaches the upstream');
    const waiting = postJson(url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'waits in line' }] });
    const waitingStream = streamChat(url, { model: 'm', messages: [{ role: 'user', content: 'waits in line too' }] });
    const forwarded = postJson(url, '/v1/completions', { model: 'm', prompt: 'waits in line as well' });
    await eventually(async () => (await (await fetch(`${url}/health`)).json()).requests.queued === 3, 'three requests wait in line');
    await gateway.close({ graceMs: 200 });
    gateway = undefined;

    expect((await running).chunks.at(-1)?.error?.code).toBe('gateway_shutting_down');
    for (const answered of [await waiting, await forwarded]) {
      expect(answered.status).toBe(503);
      expect(answered.json.error).toMatchObject({ code: 'gateway_shutting_down' });
    }
    expect((await waitingStream).status).toBe(503);
    // None of them went upstream, before or after the running one gave its place up.
    expect(endless.requests).toHaveLength(1);
  });

  it('cuts a dozen streams at once, each told so, without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      endless = await startEndlessUpstream();
      gateway = await startGateway({ port: 0, upstream: { baseUrl: endless.baseUrl } }, { tools: new Map() });
      const url = gateway.url;
      const streams = Array.from({ length: 12 }, () => streamChat(url, { model: 'm', messages: [{ role: 'user', content: 'go on forever' }] }));
      await eventually(() => endless!.requests.length === 12, 'every stream reaches the upstream');
      await gateway.close({ graceMs: 100 });
      gateway = undefined;
      for (const streamed of await Promise.all(streams)) expect(streamed.chunks.at(-1)?.error?.code).toBe('gateway_shutting_down');
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ends the grace period at once when close is called again (a second signal)', async () => {
    const { streaming, gotChunk } = await streamWithoutEnd();
    await gotChunk;
    const closing = gateway!.close({ graceMs: 600_000 });
    const again = gateway!.close();
    expect(again).toBe(closing);
    await closing;
    gateway = undefined;
    expect((await streaming).chunks.at(-1)?.error?.code).toBe('gateway_shutting_down');
  });
});
