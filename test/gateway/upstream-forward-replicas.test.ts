import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { getJson } from '../support/sse-client.ts';

/** A stand-in upstream that answers every request with one status, and counts what reached it. */
interface FakeUpstream {
  url: string;
  hits: number;
  server: Server;
}

/** `body`: the error answer's own body (undefined: an OpenAI-shaped one that echoes the request); '' is none at all. */
async function fakeUpstream(status: number, body?: string): Promise<FakeUpstream> {
  const upstream: FakeUpstream = { url: '', hits: 0, server: createServer() };
  upstream.server.on('request', (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      upstream.hits += 1;
      res.writeHead(status, { 'content-type': 'application/json' });
      if (body !== undefined) return res.end(body);
      // An error in OpenAI's shape, as vLLM's own are, so the gateway passes it back as it is (forwarded-error.ts).
      const error = status >= 400 ? { error: { message: `HTTP ${status}`, type: 'upstream', param: null, code: status } } : {};
      res.end(JSON.stringify({ ...error, from: upstream.url, status, body: Buffer.concat(parts).toString() }));
    });
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/v1`;
  return upstream;
}

const REFUSED = 'http://127.0.0.1:1/v1';

describe('forwarded requests over several replicas', () => {
  const upstreams = new Map<number, FakeUpstream>();
  let gateway: GatewayHandle | undefined;
  beforeAll(async () => {
    for (const status of [200, 429, 503]) upstreams.set(status, await fakeUpstream(status));
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  afterAll(async () => {
    await Promise.all([...upstreams.values()].map((u) => new Promise((resolve) => u.server.close(resolve))));
  });

  /** A fresh gateway: its first request goes to the first replica listed (all equally loaded). */
  async function over(...baseUrls: string[]): Promise<GatewayHandle> {
    gateway = await startGateway({ port: 0, upstream: { baseUrl: baseUrls } }, { tools: new Map() });
    return gateway;
  }

  /** Replicas of their own, closed with the test. */
  const extra: FakeUpstream[] = [];
  afterAll(async () => {
    await Promise.all(extra.map((u) => new Promise((resolve) => u.server.close(resolve))));
  });
  async function answering(status: number, body: string): Promise<FakeUpstream> {
    const upstream = await fakeUpstream(status, body);
    extra.push(upstream);
    return upstream;
  }

  function post(gw: GatewayHandle, body: BodyInit, init: RequestInit = {}): Promise<Response> {
    return fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...init });
  }

  async function replicaHealth(gw: GatewayHandle, url: string): Promise<{ healthy: boolean; failures: number; accepted: number }> {
    const health = await getJson(gw.url, '/health');
    return health.json.upstream_replicas.find((r: { base_url: string }) => r.base_url === url);
  }

  it('sends a body held whole to the next replica when one cannot be reached, and rests the dead one', async () => {
    const ok = upstreams.get(200)!;
    const gw = await over(REFUSED, ok.url);
    const res = await post(gw, '{"input":"hello"}');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ from: ok.url, body: '{"input":"hello"}' });
    expect(await replicaHealth(gw, REFUSED)).toMatchObject({ healthy: false, failures: 1 });
    expect(await replicaHealth(gw, ok.url)).toMatchObject({ healthy: true, accepted: 1 });
  });

  it('drops a 503 answer and tries the next replica; a 429 moves on too but does not rest its replica', async () => {
    const [ok, busy, unavailable] = [upstreams.get(200)!, upstreams.get(429)!, upstreams.get(503)!];
    let gw = await over(unavailable.url, ok.url);
    const before = unavailable.hits;
    let res = await post(gw, '{}');
    expect(await res.json()).toMatchObject({ from: ok.url, status: 200 });
    expect(unavailable.hits).toBe(before + 1);
    expect(await replicaHealth(gw, unavailable.url)).toMatchObject({ healthy: false });
    await gw.close();

    gw = await over(busy.url, ok.url);
    res = await post(gw, '{}');
    expect(await res.json()).toMatchObject({ from: ok.url, status: 200 });
    expect(await replicaHealth(gw, busy.url)).toMatchObject({ healthy: true, failures: 0 });
  });

  it('reads a 500 before it fails over, as a chat does: a bare one rests its replica, one that says why does not', async () => {
    const ok = upstreams.get(200)!;
    const bare = await answering(500, '');
    let gw = await over(bare.url, ok.url);
    expect(await (await post(gw, '{}')).json()).toMatchObject({ from: ok.url, status: 200 });
    expect(await replicaHealth(gw, bare.url)).toMatchObject({ healthy: false, failures: 1 });
    await gw.close();

    const saysWhy = await answering(500, JSON.stringify({ error: { message: 'this input made the tokenizer fail', type: 'InternalServerError', param: null, code: 500 } }));
    gw = await over(saysWhy.url, ok.url);
    expect(await (await post(gw, '{}')).json()).toMatchObject({ from: ok.url, status: 200 });
    expect(await replicaHealth(gw, saysWhy.url)).toMatchObject({ healthy: true, failures: 0 });
    expect(saysWhy.hits).toBe(1);
  });

  it('moves on from a replica without the model the gateway names (404 model_not_found), and rests it; without --model the 404 is the answer', async () => {
    const ok = upstreams.get(200)!;
    const noSuchModel = await answering(404, JSON.stringify({ error: { message: 'The model `m` does not exist.', type: 'NotFoundError', param: null, code: 404 } }));
    gateway = await startGateway({ port: 0, upstream: { baseUrl: [noSuchModel.url, ok.url], model: 'm' } }, { tools: new Map() });
    expect(await (await post(gateway, '{"input":"x"}')).json()).toMatchObject({ from: ok.url, status: 200, body: '{"input":"x","model":"m"}' });
    expect(await replicaHealth(gateway, noSuchModel.url)).toMatchObject({ healthy: false, failures: 1 });
    await gateway.close();

    // The client named the model: every replica would refuse it alike, so the first answer is the client's.
    const gw = await over(noSuchModel.url, ok.url);
    const res = await post(gw, '{"model":"m"}');
    expect(res.status).toBe(404);
    expect(await replicaHealth(gw, noSuchModel.url)).toMatchObject({ healthy: true, failures: 0 });
  });

  it('moves on, once, from a replica whose error answer breaks off before its end, and rests it', async () => {
    const ok = upstreams.get(200)!;
    const dying = createServer((req, res) => {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"error": {"message": "overlo');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    try {
      const dyingUrl = `http://127.0.0.1:${(dying.address() as AddressInfo).port}/v1`;
      const gw = await over(dyingUrl, ok.url);
      expect(await (await post(gw, '{}')).json()).toMatchObject({ from: ok.url, status: 200 });
      expect(await replicaHealth(gw, dyingUrl)).toMatchObject({ healthy: false, failures: 1 });
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      // One request, one answer: the broken one is not counted as a failure the client got.
      expect(metrics).toMatch(/^conveyor_forwarded_requests_total\{status="200"\} 1$/m);
      expect(metrics).not.toMatch(/^conveyor_forwarded_requests_total\{status="502"/m);
    } finally {
      await new Promise((resolve) => dying.close(resolve));
    }
  });

  it("passes the last replica's refusal back as it is once every replica has been tried", async () => {
    const [busy, unavailable] = [upstreams.get(429)!, upstreams.get(503)!];
    const gw = await over(unavailable.url, busy.url);
    const res = await post(gw, '{}');
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ from: busy.url, status: 429 });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    // One answer reached the client, so one is counted: the dropped 503 is not.
    expect(metrics).toMatch(/^conveyor_forwarded_requests_total\{status="429"\} 1$/m);
    expect(metrics).not.toMatch(/^conveyor_forwarded_requests_total\{status="503"\}/m);
  });

  it('sends a streamed body (chunked upload) to one replica only: it cannot be sent twice', async () => {
    const ok = upstreams.get(200)!;
    const before = ok.hits;
    const gw = await over(REFUSED, ok.url);
    const upload = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"input":"streamed"}'));
        controller.close();
      },
    });
    const res = await post(gw, upload, { duplex: 'half' } as RequestInit);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('server_error');
    expect(ok.hits).toBe(before);
  });
});
