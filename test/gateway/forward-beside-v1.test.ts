import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';

const auth = { authorization: 'Bearer client-key', 'content-type': 'application/json' };

describe("/tokenize and /detokenize, beside the upstream's /v1 (vLLM's, llama.cpp's)", () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ gateway: { apiKeys: ['client-key'] } });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('are forwarded to the server root of the simulator, answering as it does directly', async () => {
    const body = JSON.stringify({ model: SIM_MODEL, prompt: 'Plot a sine wave.' });
    const simRoot = conveyor.sim!.url.replace(/\/v1$/, '');
    const [through, direct] = await Promise.all([
      fetch(`${conveyor.gateway.url}/tokenize`, { method: 'POST', headers: auth, body }),
      fetch(`${simRoot}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    ]);
    expect(through.status).toBe(200);
    const tokens = (await through.json()) as { count: number; tokens: number[] };
    expect(tokens).toEqual(await direct.json());
    expect(tokens.count).toBeGreaterThan(0);

    const back = await fetch(`${conveyor.gateway.url}/detokenize`, { method: 'POST', headers: auth, body: JSON.stringify({ model: SIM_MODEL, tokens: tokens.tokens }) });
    expect(back.status).toBe(200);
    expect(((await back.json()) as { prompt: string }).prompt).toContain('Plot a sine wave.');
  });

  it("take the client's key as the /v1 endpoints do", async () => {
    const res = await fetch(`${conveyor.gateway.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: SIM_MODEL, prompt: 'hi' }) });
    expect(res.status).toBe(401);
  });

  it("pass the upstream's own error on", async () => {
    const res = await fetch(`${conveyor.gateway.url}/tokenize`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'no-such-model', prompt: 'hi' }) });
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as { error: { message: string } };
    expect(error.message).toContain('no-such-model');
  });
});

describe('where /tokenize goes for other base URLs', () => {
  let upstream: Server;
  let port: number;
  const seen: string[] = [];
  const gateways: GatewayHandle[] = [];
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"count":1,"max_model_len":8192,"tokens":[1]}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    port = (upstream.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  async function tokenizeThrough(config: { upstream: { baseUrl: string }; forwardOtherEndpoints?: boolean }): Promise<Response> {
    const gw = await startGateway({ port: 0, apiKeys: ['client-key'], ...config }, { tools: new Map() });
    gateways.push(gw);
    return fetch(`${gw.url}/tokenize?x=1`, { method: 'POST', headers: auth, body: '{"prompt":"hi"}' });
  }

  it('keeps a prefix in front of /v1 (a proxy path) and the query string', async () => {
    seen.length = 0;
    const res = await tokenizeThrough({ upstream: { baseUrl: `http://127.0.0.1:${port}/openai/v1` } });
    expect(res.status).toBe(200);
    expect(seen).toEqual(['POST /openai/tokenize?x=1']);
  });

  it('is the gateway\'s 404 when the base URL does not end in /v1: its root cannot be told from its endpoints', async () => {
    seen.length = 0;
    const res = await tokenizeThrough({ upstream: { baseUrl: `http://127.0.0.1:${port}/api` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('/v1');
    expect(seen).toEqual([]);
  });

  it('is the gateway\'s 404 with forwardOtherEndpoints off', async () => {
    seen.length = 0;
    const res = await tokenizeThrough({ upstream: { baseUrl: `http://127.0.0.1:${port}/v1` }, forwardOtherEndpoints: false });
    expect(res.status).toBe(404);
    expect(seen).toEqual([]);
  });
});
