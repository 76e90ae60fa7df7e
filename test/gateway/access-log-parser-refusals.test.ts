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

  it('names the 408 a body late past requestMs was answered with on its request\'s own line', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start(() => {}, { logger }, { clientTimeouts: { headersMs: 300, requestMs: 600 } });
    const socket = connect(gw.port, '127.0.0.1');
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":');
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    await expect.poll(() => lines.length).toBe(1);
    // Before, a line without method or path said 408 and the request's own said 200, cut_short.
    expect(lines[0]).toMatchObject({ path: '/v1/chat/completions', status: 408, error: 'unparsable_request', parser_error: 'ERR_HTTP_REQUEST_TIMEOUT' });
    expect(lines[0]).not.toHaveProperty('client_gone');
  });
});
