import { once } from 'node:events';
import { connect } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { getJson } from '../support/sse-client.ts';

type Line = Record<string, unknown>;

const scripted = scriptedGateway();

/** A pino logger whose JSON lines land in `lines`. */
function collectingLogger(level: string) {
  const lines: Line[] = [];
  return { lines, logger: pino({ level }, { write: (text: string) => lines.push(JSON.parse(text) as Line) }) };
}

/** A real gateway logging into `lines` at info, over an upstream that never answers. */
async function loggedGateway(): Promise<{ gw: Awaited<ReturnType<typeof scripted.start>>; lines: Line[] }> {
  const { lines, logger } = collectingLogger('info');
  return { gw: await scripted.start(() => {}, { logger }), lines };
}

/**
 * One access line per request when Node's parser refuses part of it: a request of its own on a
 * kept-alive connection gets Node's answer and its line; the rest of a request the route is
 * answering (its body) is told on that request's line.
 */
/** Sends a POST to `path` whose body never arrives whole, and reads what the gateway answers until it closes. */
async function lateBody(port: number, path: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`);
  let answer = '';
  for await (const chunk of socket) answer += String(chunk);
  return answer;
}

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the access log and requests refused by the HTTP parser', () => {
  it("answers a request Node's parser refused on a kept-alive connection, and gives it its line", async () => {
    const { gw, lines } = await loggedGateway();
    const socket = connect(gw.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.write('GET /nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await expect.poll(() => lines.length).toBe(1);
    // Before, its bytes already written for the first answer made the gateway drop the
    // connection without the 431 Node answers and without a line.
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    await once(socket, 'close');
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 404', 'HTTP/1.1 431']);
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[1]).toMatchObject({ status: 431, error: 'unparsable_request', parser_error: 'HPE_HEADER_OVERFLOW' });
  });

  it('writes one line for a request whose client closed its side in the middle of the body, not a second parser line', async () => {
    const { gw, lines } = await loggedGateway();
    const socket = connect(gw.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.end('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":');
    await expect.poll(() => lines.some((l) => l.path === '/v1/chat/completions')).toBe(true);
    // A request after it: its line comes after anything the first one wrote.
    expect((await getJson(gw.url, '/nothing-here')).status).toBe(404);
    await expect.poll(() => lines.some((l) => l.path === '/nothing-here')).toBe(true);
    expect(lines.map((l) => l.status)).toEqual([499, 404]);
    expect(lines[0]).toMatchObject({ client_gone: true, parser_error: 'HPE_INVALID_EOF_STATE' });
  });

  it("names the 408 a body late past requestMs was answered with on its request's own line, and /metrics counts it as that", async () => {
    const { lines, logger } = collectingLogger('info');
    // headersMs as long as requestMs: the headers, sent at once, have 600 ms to be read (and the line to get its path) on a slow machine.
    const gw = await scripted.start(() => {}, { logger }, { clientTimeouts: { headersMs: 600, requestMs: 600 } });
    const answer = await lateBody(gw.port, '/v1/chat/completions');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await expect.poll(() => lines.length).toBe(1);
    // Before, a line without method or path said 408 and the request's own said 200, cut_short.
    expect(lines[0]).toMatchObject({ path: '/v1/chat/completions', status: 408, error: 'request_timeout', parser_error: 'ERR_HTTP_REQUEST_TIMEOUT' });
    // The 408 the server wrote is the whole answer: neither the client's leaving nor a cut one.
    expect(lines[0]).not.toHaveProperty('client_gone');
    expect(lines[0]).not.toHaveProperty('cut_short');
    // Counted once the route's body read has ended; before, as client_aborted.
    const outcomes = async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      return { request_timeout: sample(text, 'conveyor_requests_total{outcome="request_timeout"}'), client_aborted: sample(text, 'conveyor_requests_total{outcome="client_aborted"}') };
    };
    await expect.poll(async () => Object.values(await outcomes()).some((n) => n !== undefined)).toBe(true);
    expect(await outcomes()).toEqual({ request_timeout: 1, client_aborted: undefined });
  });

  it('counts a forwarded request whose streamed body was late past requestMs by its 408, not as a client that left', async () => {
    const { lines, logger } = collectingLogger('info');
    // A body over maxBodyBytes is streamed upstream as it comes (the upstream here never answers).
    const gw = await scripted.start(() => {}, { logger }, { clientTimeouts: { headersMs: 600, requestMs: 600 }, maxBodyBytes: 100 });
    expect(await lateBody(gw.port, '/v1/embeddings')).toMatch(/^HTTP\/1\.1 408 /);
    const forwarded = async () => (await (await fetch(`${gw.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('conveyor_forwarded_requests_total{'));
    await expect.poll(async () => (await forwarded()).length).toBe(1);
    expect(await forwarded()).toEqual(['conveyor_forwarded_requests_total{status="408",error="request_timeout"} 1']);
    expect(lines[0]).toMatchObject({ path: '/v1/embeddings', status: 408, error: 'request_timeout' });
  });

  it('counts a chunked body whose chunk size is malformed by the 400 it was answered, not as a client that left', async () => {
    const { gw, lines } = await loggedGateway();
    const socket = connect(gw.port, '127.0.0.1');
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n{"model":\r\nzz\r\n');
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ path: '/v1/chat/completions', status: 400, error: 'unparsable_request', parser_error: 'HPE_INVALID_CHUNK_SIZE' });
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    // Before, /metrics counted it client_aborted while its line said 400.
    expect([sample(text, 'conveyor_requests_total{outcome="unparsable_request"}'), sample(text, 'conveyor_requests_total{outcome="client_aborted"}')]).toEqual([1, undefined]);
  });

  it('gives a refused request pipelined behind one still being answered its own line, not the earlier request\'s', async () => {
    const { gw, lines } = await loggedGateway();
    const socket = connect(gw.port, '127.0.0.1');
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
    // A whole completion (its upstream never answers), then a request whose headers are past the limit.
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
    );
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    await expect.poll(() => lines.length).toBe(2);
    // Before, the completion's line said 431 and the refused request had none.
    expect(lines.find((l) => l.method === undefined)).toMatchObject({ status: 431, error: 'unparsable_request', parser_error: 'HPE_HEADER_OVERFLOW' });
    const completion = lines.find((l) => l.path === '/v1/chat/completions');
    expect(completion?.status).not.toBe(431);
    expect(completion).not.toHaveProperty('parser_error');
  });

  it('names a 408 for headers late past headersMs request_timeout too', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start(() => {}, { logger }, { clientTimeouts: { headersMs: 300, requestMs: 600 } });
    const socket = connect(gw.port, '127.0.0.1');
    socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toEqual(expect.objectContaining({ status: 408, error: 'request_timeout', parser_error: 'ERR_HTTP_REQUEST_TIMEOUT' }));
  });
});
