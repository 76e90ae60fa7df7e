import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';

const AUTH = { authorization: 'Bearer client-key' };

describe("a forwarded request's upstream error reaches the client in OpenAI's shape (the simulator, vLLM's FastAPI bodies)", () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ gateway: { apiKeys: ['client-key'] } });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('regression: an unknown /v1 path answered {"detail":"Not Found"} upstream is a 404 not_found, naming the request', async () => {
    const direct = await fetch(`${conveyor.sim!.url}/nonexist`, { method: 'POST' });
    expect(await direct.json()).toEqual({ detail: 'Not Found' });

    const post = await fetch(`${conveyor.gateway.url}/v1/nonexist`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toBe('application/json');
    expect(await post.json()).toEqual({ error: { message: 'Not Found (upstream: POST /v1/nonexist)', type: 'invalid_request_error', param: null, code: 'not_found' } });

    const get = await fetch(`${conveyor.gateway.url}/v1/foo?x=1`, { headers: AUTH });
    expect(get.status).toBe(404);
    expect(await get.json()).toEqual({ error: { message: 'Not Found (upstream: GET /v1/foo)', type: 'invalid_request_error', param: null, code: 'not_found' } });

    // HEAD: the status and headers alone, as for any HEAD.
    const head = await fetch(`${conveyor.gateway.url}/v1/foo`, { method: 'HEAD', headers: AUTH });
    expect(head.status).toBe(404);
    expect(await head.text()).toBe('');
  });

  it("keeps the upstream's 405 and its Allow header, coded as the gateway's own 405", async () => {
    const res = await fetch(`${conveyor.gateway.url}/v1/completions`, { headers: AUTH });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({
      error: { message: 'Method Not Allowed (upstream: GET /v1/completions)', type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
    });
  });

  it('passes an error already in OpenAI\'s shape back byte for byte', async () => {
    const request = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: SIM_MODEL }) };
    const direct = await fetch(`${conveyor.sim!.url}/completions`, request);
    const through = await fetch(`${conveyor.gateway.url}/v1/completions`, { ...request, headers: { ...request.headers, ...AUTH } });
    expect(through.status).toBe(direct.status);
    expect(await through.text()).toBe(await direct.text());
  });

  it('gives the openai SDK a typed error with the message and code', async () => {
    const client = new OpenAI({ baseURL: `${conveyor.gateway.url}/v1`, apiKey: 'client-key', maxRetries: 0 });
    const error = await client.post('/nonexist', { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('not_found');
    expect((error as Error).message).toBe('404 Not Found (upstream: POST /v1/nonexist)');
  });
});

/** How the scripted upstream answers `/v1/<name>`. */
const ANSWERS: Record<string, (res: ServerResponse) => void> = {
  'plain-500': (res) => res.writeHead(500, { 'content-type': 'text/plain', 'retry-after': '3' }).end('Internal Server Error'),
  'html-502': (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html><head><style>p{}</style></head><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>'),
  'empty-404': (res) => res.writeHead(404, { 'content-length': '0' }).end(),
  'vllm-401': (res) => res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end('{"error":"Unauthorized"}'),
  'fastapi-422': (res) =>
    res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: [{ type: 'missing', loc: ['body', 'input'], msg: 'Field required', input: { secret: 'x'.repeat(100) } }] })),
  'old-vllm-400': (res) => res.writeHead(400, { 'content-type': 'application/json' }).end('{"object":"error","message":"bad things","type":"BadRequestError","param":null,"code":400}'),
  'openai-429': (res) => res.writeHead(429, { 'content-type': 'application/json', 'x-ratelimit': 'kept' }).end('{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}'),
  'model-404': (res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"The model `nope` does not exist."}'),
  'big-500': (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('y'.repeat(200_000)),
};

describe('error answers of every kind from a scripted upstream', () => {
  let upstream: Server;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => (ANSWERS[req.url!.slice('/v1/'.length)] ?? ((r) => r.writeHead(200).end('ok')))(res));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    gateway = await startGateway({ port: 0, apiKeys: ['client-key'], upstream: { baseUrl } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  async function get(name: string) {
    const res = await fetch(`${gateway.url}/v1/${name}`, { headers: AUTH });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  const error = (text: string) => (JSON.parse(text) as { error: Record<string, unknown> }).error;

  it("wraps plain text and HTML, keeping the status and the upstream's other headers", async () => {
    const plain = await get('plain-500');
    expect(plain.status).toBe(500);
    expect(plain.headers.get('retry-after')).toBe('3');
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(error(plain.text)).toEqual({ message: 'Internal Server Error (upstream: GET /v1/plain-500)', type: 'server_error', param: null, code: 'upstream_response_error' });
    const html = await get('html-502');
    expect(html.status).toBe(502);
    expect(error(html.text)).toMatchObject({ message: '502 Bad Gateway nginx (upstream: GET /v1/html-502)', type: 'server_error' });
  });

  it('names the status when the body says nothing', async () => {
    const empty = await get('empty-404');
    expect(empty.status).toBe(404);
    expect(error(empty.text)).toEqual({ message: 'Not Found (upstream: GET /v1/empty-404)', type: 'invalid_request_error', param: null, code: 'not_found' });
  });

  // As on the chat route: the client's key is never sent upstream, so passed on as a 401 an
  // OpenAI client raised an AuthenticationError about a key the gateway had accepted.
  it("says a 401 is the upstream refusing the gateway's own key, not the client's: a 502, as on the chat route", async () => {
    const refused = await get('vllm-401');
    expect(refused.status).toBe(502);
    expect(refused.headers.get('www-authenticate')).toBeNull();
    expect(error(refused.text)).toMatchObject({ type: 'server_error', code: 'upstream_response_error' });
    expect(error(refused.text).message).toMatch(/^the upstream refused the gateway's own credentials \(HTTP 401: Unauthorized \(upstream: GET \/v1\/vllm-401\)\)/);
  });

  it("reads FastAPI's validation list as fields and a param, without quoting the body back", async () => {
    const invalid = await get('fastapi-422');
    expect(invalid.status).toBe(422);
    expect(error(invalid.text)).toEqual({ message: 'input: Field required (upstream: GET /v1/fastapi-422)', type: 'invalid_request_error', param: 'input', code: 'invalid_request' });
  });

  it("rewrites vLLM's older top-level error object, which OpenAI's clients do not read, and codes a model 404 as model_not_found", async () => {
    const old = await get('old-vllm-400');
    expect(error(old.text)).toEqual({ message: 'bad things (upstream: GET /v1/old-vllm-400)', type: 'invalid_request_error', param: null, code: 'invalid_request' });
    const model = await get('model-404');
    expect(error(model.text)).toEqual({ message: 'The model `nope` does not exist. (upstream: GET /v1/model-404)', type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
  });

  it('keeps an OpenAI-shaped error untouched, headers included', async () => {
    const limited = await get('openai-429');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit')).toBe('kept');
    expect(limited.text).toBe('{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}');
  });

  it('quotes a huge error body short, holding no more than its first 64 KiB', async () => {
    const big = await get('big-500');
    expect(big.status).toBe(500);
    expect(error(big.text).message).toBe(`${'y'.repeat(300)}… (upstream: GET /v1/big-500)`);
  });

  it('leaves successful answers as they were', async () => {
    const ok = await get('anything-else');
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('ok');
  });
});
