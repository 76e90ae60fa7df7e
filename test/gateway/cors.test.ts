import { once } from 'node:events';
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatewayConfigError } from '../../core/errors.ts';
import { startGateway } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();
const APP = 'http://localhost:5173';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request as a browser page on `headers.origin` would send it. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const json = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ host: '127.0.0.1', port, method, path, headers: json ? { 'content-type': 'application/json', ...headers } : headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(json);
  });
}

/** The browser's question before a cross-origin JSON POST with a bearer key. */
const preflight = (origin: string, extra: Record<string, string> = {}) => ({
  origin,
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'authorization,content-type,x-stainless-os',
  ...extra,
});

/** An upstream that answers every round with "Hello." */
async function helloGateway(config: Parameters<typeof scripted.start>[2]) {
  return scripted.start(
    (_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hello.' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    },
    {},
    config,
  );
}

const chat = { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] };

describe('CORS for web pages on allowed origins', () => {
  it('answers an allowed origin\'s preflight, then streams to it with the headers the page needs to read the answer', async () => {
    const gw = await helloGateway({ allowedOrigins: [`${APP}/`] });
    const asked = await send(gw.port, 'OPTIONS', '/v1/chat/completions', preflight(APP, { 'access-control-request-private-network': 'true' }));
    expect(asked.status).toBe(204);
    expect(asked.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'authorization,content-type,x-stainless-os',
      'access-control-allow-private-network': 'true',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    expect(scripted.upstream.requests).toHaveLength(0);

    const streamed = await send(gw.port, 'POST', '/v1/chat/completions', { origin: APP }, chat);
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    expect(streamed.headers['access-control-allow-origin']).toBe(APP);
    expect(streamed.headers['access-control-expose-headers']).toBe('x-conveyor-request-id, x-request-id, x-should-retry, retry-after');
    expect(streamed.headers['x-conveyor-request-id']).toMatch(/^chatcmpl-/);
    expect(streamed.text).toContain('Hello.');
  });

  it('puts the headers on errors too, so the page can read why', async () => {
    const gw = await helloGateway({ allowedOrigins: [APP], apiKeys: ['k1'] });
    const refused = await send(gw.port, 'POST', '/v1/chat/completions', { origin: APP }, chat);
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(APP);
    expect(JSON.parse(refused.text).error.code).toBe('invalid_api_key');
    // A preflight carries no key: it is answered without one.
    expect((await send(gw.port, 'OPTIONS', '/v1/chat/completions', preflight(APP))).status).toBe(204);
  });

  it('refuses the preflight of any other origin, so its page never sends the POST', async () => {
    for (const allowedOrigins of [[], [APP]]) {
      const gw = await helloGateway({ allowedOrigins });
      const asked = await send(gw.port, 'OPTIONS', '/v1/chat/completions', preflight('https://evil.example'));
      expect(asked.status).toBe(403);
      expect(asked.headers['access-control-allow-origin']).toBeUndefined();
      expect(JSON.parse(asked.text).error).toMatchObject({ code: 'origin_not_allowed', type: 'invalid_request_error' });
      expect(JSON.parse(asked.text).error.message).toContain('--allowed-origin');
    }
  });

  it('adds nothing for requests without an Origin (every non-browser client) or from an origin not listed', async () => {
    const gw = await helloGateway({ allowedOrigins: [APP] });
    const plain = await send(gw.port, 'POST', '/v1/chat/completions', {}, chat);
    expect(plain.status).toBe(200);
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    const other = await send(gw.port, 'GET', '/health', { origin: 'https://evil.example' });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // Yet each says it varies by Origin: an allowed page gets another answer to the same request.
    expect(plain.headers['vary']).toBe('Origin');
    expect(other.headers['vary']).toBe('Origin');
    const withoutCors = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
    try {
      expect((await send(withoutCors.port, 'GET', '/health', {})).headers['vary']).toBeUndefined();
    } finally {
      await withoutCors.close();
    }
    // OPTIONS that is not a preflight is still a method the routes do not have.
    expect((await send(gw.port, 'OPTIONS', '/v1/chat/completions', {})).status).toBe(405);
  });

  it('puts them on the 503 of a request that comes in while the gateway shuts down, so the page can read that it may retry', async () => {
    let endStream!: () => void;
    const gw = await scripted.start(
      (_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: 'Hel' }));
        endStream = () => res.end([vllmChunk({ content: 'lo.' }, 'stop'), DONE].join(''));
      },
      {},
      { allowedOrigins: [APP] },
    );
    // One keep-alive connection, so that the second request reaches the draining gateway.
    const socket = connect(gw.port, '127.0.0.1');
    let text = '';
    socket.on('data', (b: Buffer) => (text += b.toString('utf8')));
    const json = JSON.stringify(chat);
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    await eventually(() => text.includes('Hel'), 'the first token');
    void gw.close({ graceMs: 20_000 });
    socket.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\n\r\n`);
    // node:http takes the next request on a connection once the answer before it has ended.
    endStream();
    await eventually(() => /HTTP\/1\.1 503 [^]*\r\n\r\n\{.*\}$/.test(text), 'the 503');
    const refused = text.slice(text.indexOf('HTTP/1.1 503'));
    expect(refused.toLowerCase()).toContain(`access-control-allow-origin: ${APP}`);
    expect(refused).toContain('"code":"gateway_shutting_down"');
    socket.destroy();
  });

  it('keeps Vary: Origin on a forwarded answer that has a Vary of its own, joining the two', async () => {
    const gw = await scripted.start(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', vary: 'Accept-Encoding, origin' }).end('{"object":"list","data":[]}');
      },
      {},
      { allowedOrigins: [APP] },
    );
    const forwarded = await send(gw.port, 'POST', '/v1/embeddings', { origin: APP }, { model: MODEL, input: 'hi' });
    expect(forwarded.status).toBe(200);
    expect(forwarded.headers['access-control-allow-origin']).toBe(APP);
    expect(forwarded.headers['vary']).toBe('Origin, Accept-Encoding');
  });

  // A forwarded endpoint takes whatever method the upstream does (SGLang's DELETE /v1/files/{id});
  // a preflight that allowed only GET and POST kept a page from sending the rest.
  it("allows a forwarded path's other methods in its preflight, and then forwards the DELETE", async () => {
    const gw = await scripted.start((req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, deleted: true })), {}, { allowedOrigins: [APP] });
    const asked = await send(gw.port, 'OPTIONS', '/v1/files/file-1', preflight(APP, { 'access-control-request-method': 'DELETE' }));
    expect(asked.status).toBe(204);
    expect(asked.headers['access-control-allow-methods']).toBe('DELETE, GET, PATCH, POST, PUT');
    const deleted = await send(gw.port, 'DELETE', '/v1/files/file-1', { origin: APP });
    expect(deleted.status).toBe(200);
    expect(JSON.parse(deleted.text)).toEqual({ method: 'DELETE', deleted: true });
    // The gateway's own routes take only GET and POST.
    expect((await send(gw.port, 'OPTIONS', '/v1/chat/completions', preflight(APP))).headers['access-control-allow-methods']).toBe('GET, POST');
  });

  it('with * and API keys, echoes any origin', async () => {
    const gw = await helloGateway({ allowedOrigins: ['*'], apiKeys: ['k1'] });
    const asked = await send(gw.port, 'OPTIONS', '/v1/models', preflight('https://any.example'));
    expect(asked.status).toBe(204);
    expect(asked.headers['access-control-allow-origin']).toBe('https://any.example');
  });
});

describe('allowedOrigins in the configuration', () => {
  const upstream = { baseUrl: 'http://127.0.0.1:9/v1' };

  it('refuses * without API keys: any page its user opens could run the tools', async () => {
    await expect(startGateway({ port: 0, upstream, allowedOrigins: ['*'] }, { tools: new Map() })).rejects.toThrow(GatewayConfigError);
    await expect(startGateway({ port: 0, upstream, allowedOrigins: ['*'] }, { tools: new Map() })).rejects.toThrow(/needs apiKeys/);
  });

  it('refuses what is not an origin', async () => {
    for (const value of ['localhost:3000', 'http://app.example/path', 'ftp://app.example', 'http://app.example/?q=1']) {
      await expect(startGateway({ port: 0, upstream, allowedOrigins: [value] }, { tools: new Map() }), value).rejects.toThrow(/is not an origin/);
    }
  });
});

describe('the events WebSocket from a browser page', () => {
  /** The upgrade's status: 101 when it opened, else the refusal's. */
  async function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
    const ws = new WebSocket(url, { headers });
    ws.on('error', () => {});
    const result = await Promise.race([
      once(ws, 'open').then(() => 101),
      once(ws, 'unexpected-response').then(([, res]) => (res as IncomingMessage).statusCode ?? 0),
    ]);
    ws.terminate();
    return result;
  }

  it('needs an allowed Origin (browsers open WebSockets without asking) and a loopback Host', async () => {
    const gw = await helloGateway({ allowedOrigins: [APP] });
    const done = await send(gw.port, 'POST', '/v1/chat/completions', {}, chat);
    const url = `ws://127.0.0.1:${gw.port}/v1/requests/${done.headers['x-conveyor-request-id']}/events`;
    expect(await upgradeStatus(url, {})).toBe(101);
    expect(await upgradeStatus(url, { origin: APP })).toBe(101);
    expect(await upgradeStatus(url, { origin: 'https://evil.example' })).toBe(403);
    // The gateway's own pages (the playground) are same-origin.
    expect(await upgradeStatus(url, { origin: `http://127.0.0.1:${gw.port}` })).toBe(101);
    expect(await upgradeStatus(url, { origin: `http://127.0.0.1:${gw.port + 1}` })).toBe(403);
    expect(await upgradeStatus(url, { host: 'rebound.example' })).toBe(403);
  });

  it('takes the API key as the subprotocol openai-insecure-api-key.<key> (a browser cannot set Authorization) and answers with the other one offered', async () => {
    const gw = await helloGateway({ apiKeys: ['k1'] });
    const done = await send(gw.port, 'POST', '/v1/chat/completions', { authorization: 'Bearer k1' }, chat);
    const url = `ws://127.0.0.1:${gw.port}/v1/requests/${done.headers['x-conveyor-request-id']}/events`;
    const ws = new WebSocket(url, ['conveyor.events', 'openai-insecure-api-key.k1']);
    await once(ws, 'open');
    expect(ws.protocol).toBe('conveyor.events');
    ws.terminate();
    const wrong = new WebSocket(url, ['conveyor.events', 'openai-insecure-api-key.k2']);
    wrong.on('error', () => {});
    const [, res] = (await once(wrong, 'unexpected-response')) as [unknown, IncomingMessage];
    expect(res.statusCode).toBe(401);
    wrong.terminate();
  });
});
