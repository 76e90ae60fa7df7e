import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { SIM_MODEL } from '../support/e2e-profile.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';

const hello = JSON.stringify({ model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });

/** A POST with no Content-Type at all, as Python's `requests.post(url, data=json.dumps(body))` sends it. */
function postUntyped(url: string, headers: Record<string, string>, path = '/v1/chat/completions', body = hello): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// vLLM's FastAPI reads a body without a Content-Type as JSON (only a non-JSON type is refused), and
// scripts that post `data=json.dumps(...)` with requests send none: the gateway answered them 415.
// A browser page can send a typeless POST without a preflight too (a Blob without a type), but a
// browser always sends Origin with a POST: such a request is still refused.
describe('regression: a chat body sent without a Content-Type', () => {
  const pair = fastSimGateway();

  it('is read as JSON from a client that is no browser (no Origin), as vLLM reads it', async () => {
    const res = await postUntyped(pair.gateway.url, {});
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).object).toBe('chat.completion');
  });

  it("is still refused 415 from a web page (an Origin), which could send it without the browser's preflight", async () => {
    const before = pair.sim.counters().requestsReceived;
    const res = await postUntyped(pair.gateway.url, { origin: 'https://evil.example' });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body).error.code).toBe('unsupported_media_type');
    expect(pair.sim.counters().requestsReceived).toBe(before);
  });
});

describe('regression: a forwarded body sent without a Content-Type, where the gateway names the model', () => {
  let echo: Server;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    echo = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway({ port: 0, upstream: { baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`, model: 'served-name' } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => echo?.close(resolve));
  });

  it("has its model replaced, as a typed JSON body's is: the upstream reads it as JSON too", async () => {
    const res = await postUntyped(gateway.url, {}, '/v1/completions', JSON.stringify({ model: 'client-name', prompt: 'hi' }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ model: 'served-name', prompt: 'hi' });
  });
});
