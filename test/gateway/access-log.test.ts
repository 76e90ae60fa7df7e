import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { GatewayDeps, GatewayHandle } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { answeringTool, callThenAnswer, SCRIPTED, scriptedGateway, toolMap, untilAbortedTool } from '../support/scripted-gateway.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';


type Line = Record<string, unknown>;

const scripted = scriptedGateway();
const echo = answeringTool('echo', (args) => String(args.text));

/** A pino logger whose JSON lines land in `lines`. */
function collectingLogger(level: string) {
  const lines: Line[] = [];
  return { lines, logger: pino({ level }, { write: (text: string) => lines.push(JSON.parse(text) as Line) }) };
}

/** A real gateway logging into `lines`, over an upstream that calls `echo` once, then answers. */
async function loggedGateway(level: string, deps: Partial<GatewayDeps> = {}): Promise<{ gw: GatewayHandle; lines: Line[] }> {
  const { lines, logger } = collectingLogger(level);
  const gw = await scripted.start(
    callThenAnswer({ name: 'echo', arguments: { text: 'hi' } }, () => 'It said hi.'),
    { tools: toolMap(echo), logger, ...deps },
  );
  return { gw, lines };
}

const ask = { model: MODEL, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'say hi' }] };

describe('the access log', () => {
  it('writes one line per completion: status, outcome, first token, rounds, tool calls and upstream', async () => {
    const { gw, lines } = await loggedGateway('info');
    const streamed = await streamChat(gw.url, ask);
    expect(streamed.content).toContain('It said hi.');
    await expect.poll(() => lines.length).toBe(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      request_id: streamed.requestId,
      model: MODEL,
      stream: true,
      partial_execution: true,
      outcome: 'answer',
      rounds: 2,
      tool_calls: 1,
      upstreams: [scripted.upstream.baseUrl],
    });
    expect(line.ttft_ms).toBeGreaterThan(0);
    expect(line.duration_ms).toBeGreaterThanOrEqual(line.ttft_ms as number);
    expect(JSON.stringify(line)).not.toContain('say hi');
  });

  it('names the error code of a refused body and of an upstream that is down, whose answer carries its request id', async () => {
    const { gw, lines } = await loggedGateway('info');
    const refused = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [] });
    expect(refused.status).toBe(400);
    await scripted.upstream.close();
    const down = await postJson(gw.url, '/v1/chat/completions', ask);
    expect(down.status).toBe(502);
    await expect.poll(() => lines.length).toBe(2);
    // Refused before its completion began, it still logs the id its client was given.
    expect(lines[0]).toMatchObject({ status: 400, error: 'invalid_request', request_id: refused.headers.get('x-conveyor-request-id') });
    expect(lines[0]).not.toHaveProperty('outcome');
    // Its id names a timeline all the same: it began and ended, refused.
    const refusedTimeline = await getJson(gw.url, `/v1/requests/${refused.headers.get('x-conveyor-request-id')}/timeline`);
    expect((refusedTimeline.json.events as Array<{ type: string; detail?: string }>).map((e) => [e.type, e.detail])).toEqual([
      ['request-start', undefined],
      ['request-end', 'invalid_request'],
    ]);
    const requestId = down.headers.get('x-conveyor-request-id');
    expect(requestId).toMatch(/^chatcmpl-/);
    // The upstream took no round: none is counted (as in conveyor_rounds_total).
    expect(lines[1]).toMatchObject({ status: 502, error: down.json.error.code, request_id: requestId, outcome: down.json.error.code, rounds: 0, tool_calls: 0 });
    // The client is not told the upstream's address; the operator's line is.
    expect(down.json.error.message).not.toContain(scripted.upstream.baseUrl);
    expect(lines[1]!.error_detail).toContain(`upstream ${scripted.upstream.baseUrl} failed: `);
    expect(lines[0]).not.toHaveProperty('error_detail');
  });

  it("names the code of an upstream's error answer it forwarded, as its client got it", async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start((_req, res) => void res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}'), { logger });
    const res = await fetch(`${gw.url}/v1/nonexist`);
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as { error: { code: string } };
    expect(error.code).toBe('not_found');
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ path: '/v1/nonexist', status: 404, error: 'not_found' });
  });

  it('counts a forwarded error answer cut before its end as the error the client got, not the upstream status', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"error":');
      setTimeout(() => res.socket?.destroy(), 20);
    }, { logger });
    const res = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":"hi"}' });
    expect(res.status).toBe(502);
    const { error } = (await res.json()) as { error: { code: string } };
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain(`conveyor_forwarded_requests_total{status="502",error="${error.code}"} 1`);
    expect(metrics).not.toMatch(/^conveyor_forwarded_requests_total\{status="500"/m);
    await expect.poll(() => lines.length).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toMatchObject({ path: '/v1/embeddings', status: 502, error: error.code });
  });

  it('logs a request target that is not a path without its query, which may carry a key', async () => {
    const { gw, lines } = await loggedGateway('info');
    const socket = connect(gw.port, '127.0.0.1');
    socket.end('GET http://[/?api_key=LEAKED HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ status: 400, error: 'invalid_request', path: 'http://[/' });
    expect(JSON.stringify(lines[0])).not.toContain('LEAKED');
  });

  it("writes a line for a request Node's parser refused (headers too large), answered as Node answers it", async () => {
    const { gw, lines } = await loggedGateway('info');
    const socket = connect(gw.port, '127.0.0.1');
    socket.end(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ status: 431, error: 'unparsable_request', parser_error: 'HPE_HEADER_OVERFLOW' });
  });

  it('closes a refused connection even when the client keeps its side open', async () => {
    const { gw } = await loggedGateway('info');
    const socket = connect({ port: gw.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.write('GARBAGE\r\n\r\n');
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    await once(socket, 'end');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    // Before, the gateway only half-closed it: its socket stayed, one per such client.
    const connections = () => new Promise<number>((resolve, reject) => gw.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await expect.poll(connections).toBe(0);
    socket.destroy();
  });

  it('warns when an upstream replica fails and rests; the request moves on to the other', async () => {
    const dead = await startTestUpstream(() => {});
    await dead.close();
    const { lines, logger } = collectingLogger('info');
    const gateway = await scripted.start(
      (_req, res) => {
        sseHeaders(res);
        res.end([vllmChunk({ content: 'ok' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { logger },
      { upstream: { baseUrl: [dead.baseUrl, SCRIPTED] } },
    );
    const streamed = await streamChat(gateway.url, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(streamed.content).toBe('ok');
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'upstream replica resting', replica: dead.baseUrl, rest_ms: 2000, consecutive_failures: 1 });
    expect(lines[0]!.reason).toEqual(expect.any(String));
    expect(lines[1]).toMatchObject({ status: 200, outcome: 'answer', upstreams: [scripted.upstream.baseUrl] });
  });

  it('logs probes, scrapes and the playground\'s files at debug only', async () => {
    const info = await loggedGateway('info');
    await getJson(info.gw.url, '/health');
    for (const path of ['/', '/playground/playground.js']) expect((await fetch(`${info.gw.url}${path}`)).status).toBe(200);
    await streamChat(info.gw.url, ask);
    await expect.poll(() => info.lines.length).toBe(1);
    expect(info.lines.map((l) => l.path)).toEqual(['/v1/chat/completions']);

    const debug = await loggedGateway('debug');
    await getJson(debug.gw.url, '/health');
    await expect.poll(() => debug.lines.length).toBe(1);
    expect(debug.lines[0]).toMatchObject({ level: 20, path: '/health', status: 200 });
  });

  it('names how the request ended when it stopped a tool that was still running', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start(
      (_req, res) => {
        // A whole call (its tool starts at once), then the upstream dies while the tool still runs.
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: '<tool_call>\n{"name": "wait", "arguments": {}}\n</tool_call>' }));
        setTimeout(() => res.socket?.destroy(), 50);
      },
      { tools: toolMap(untilAbortedTool), logger },
    );
    const down = await postJson(gw.url, '/v1/chat/completions', { ...ask, tools: [{ type: 'function', function: { name: 'wait' } }] });
    expect(down.status).toBe(502);
    expect(down.json.error.code).toBe('upstream_connection_error');
    await expect.poll(() => lines.length).toBe(1);
    const events = (await getJson(gw.url, `/v1/requests/${down.headers.get('x-conveyor-request-id')}/timeline`)).json.events as Array<{ type: string; detail?: string }>;
    // The call ends (aborted) before the request does, so a follower of its events sees both.
    expect(events.slice(-2).map((e) => [e.type, e.detail])).toEqual([
      ['tool-end', 'aborted'],
      ['request-end', 'upstream_connection_error'],
    ]);
    expect(lines[0]).toMatchObject({ status: 502, error: 'upstream_connection_error', outcome: 'upstream_connection_error', tool_calls: 1 });
  });

  it('names the error event a stream ended with after its 200, as the code the client got', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start(
      (_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: 'Once' }));
        setTimeout(() => res.socket?.destroy(), 50);
      },
      { logger },
    );
    const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'Tell a story' }] });
    expect(streamed.status).toBe(200);
    const code = streamed.chunks.find((chunk) => chunk.error !== undefined)?.error?.code;
    expect(code).toBe('upstream_connection_error');
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ status: 200, error: code, outcome: code });
  });

  it('writes a line for a WebSocket upgrade: when it is refused, and when an accepted one closes', async () => {
    const { gw, lines } = await loggedGateway('info');
    const events = (id: string) => `${gw.url.replace(/^http/, 'ws')}/v1/requests/${id}/events`;
    const refused = new WebSocket(events('chatcmpl-nope'));
    refused.on('error', () => {});
    const [, answer] = (await once(refused, 'unexpected-response')) as [unknown, IncomingMessage];
    refused.terminate();
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ method: 'GET', path: '/v1/requests/chatcmpl-nope/events', status: answer.statusCode, error: 'not_found', websocket: true });

    const streamed = await streamChat(gw.url, ask);
    await expect.poll(() => lines.length).toBe(2);
    const followed = new WebSocket(events(streamed.requestId!));
    const [code] = (await once(followed, 'close')) as [number];
    expect(code).toBe(1000);
    await expect.poll(() => lines.length).toBe(3);
    expect(lines[2]).toMatchObject({ path: `/v1/requests/${streamed.requestId}/events`, status: 101, websocket: true });
    expect(lines[2]).not.toHaveProperty('error');

    // A handshake ws itself refuses (no Sec-WebSocket-Key): answered in the OpenAI shape, and logged.
    const socket = connect(gw.port, '127.0.0.1');
    socket.end(`GET /v1/requests/${streamed.requestId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    let raw = '';
    for await (const chunk of socket) raw += String(chunk);
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error.message).toMatch(/^WebSocket handshake: .*Sec-WebSocket-Key/);
    await expect.poll(() => lines.length).toBe(4);
    expect(lines[3]).toMatchObject({ path: `/v1/requests/${streamed.requestId}/events`, status: 400, error: 'invalid_request', websocket: true });
  });

  it('says client_gone only when the client left, and cut_short when the gateway cut the answer', async () => {
    const { lines, logger } = collectingLogger('info');
    const gw = await scripted.start(
      (req, res) => {
        sseHeaders(res);
        if (req.url === '/v1/completions') {
          // A forwarded stream whose upstream dies after its status line: the gateway cuts the answer.
          res.write('data: {"choices":[{"text":"Once"}]}\n\n');
          setTimeout(() => res.socket?.destroy(), 50);
        } else {
          res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: 'Once' }));
        }
      },
      { logger },
    );
    const forwarded = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'Tell a story', stream: true }) });
    await expect(forwarded.text()).rejects.toThrow();
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ path: '/v1/completions', status: 200, cut_short: true });
    expect(lines[0]).not.toHaveProperty('client_gone');

    const leaving = new AbortController();
    await expect(streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'Tell a story' }] }, () => leaving.abort(), leaving.signal)).rejects.toThrow();
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[1]).toMatchObject({ path: '/v1/chat/completions', status: 200, client_gone: true, outcome: 'client_aborted' });
    expect(lines[1]).not.toHaveProperty('cut_short');

    // Not streamed, the client left before anything was sent: nginx's 499, not a 200 that never went out.
    const impatient = new AbortController();
    const waiting = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Tell a story' }] }),
      signal: impatient.signal,
    });
    await expect.poll(() => scripted.upstream.requests.length).toBe(3);
    impatient.abort();
    await expect(waiting).rejects.toThrow();
    await expect.poll(() => lines.length).toBe(3);
    expect(lines[2]).toMatchObject({ path: '/v1/chat/completions', status: 499, client_gone: true, stream: false, outcome: 'client_aborted' });
  });

  it('logs an error the gateway did not expect with its stack, while the client gets internal_error', async () => {
    const { gw, lines } = await loggedGateway('info', {
      health: () => {
        throw new Error('the health probe broke');
      },
    });
    const res = await getJson(gw.url, '/health');
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('internal_error');
    expect(JSON.stringify(res.json)).not.toContain('health probe broke');
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'unexpected error', method: 'GET', path: '/health' });
    expect((lines[0]!.err as { stack: string }).stack).toContain('the health probe broke');
  });
});
