import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';
import { sseHeaders, startTestUpstream, type TestUpstream } from '../llm-client/upstream-test-server.ts';

const body = { model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }] };
/** Short enough that a silent replica costs the test little, long enough for the sim's prefill. */
const timeouts = { firstTokenMs: 1500 };

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).reverse().map((s) => s.close()));
});

async function sim(modelName?: string): Promise<SimHandle> {
  const handle = await startSim({ profile: E2E_PROFILE, modelName });
  open.push(handle);
  return handle;
}

/** A scripted replica that answers `GET /models` itself (the gateway asks at start-up). */
async function fake(handler: Parameters<typeof startTestUpstream>[0]): Promise<TestUpstream> {
  const server = await startTestUpstream(handler, { modelList: true });
  open.push(server);
  return server;
}

async function gatewayOver(upstream: Record<string, unknown>): Promise<GatewayHandle> {
  const gateway = await startGateway({ port: 0, upstream: { timeouts, ...upstream } as never }, { tools: new Map() });
  open.push(gateway);
  return gateway;
}

async function replicaHealth(gateway: GatewayHandle, baseUrl: string) {
  const health = await getJson(gateway.url, '/health');
  return health.json.upstream_replicas.find((r: { base_url: string }) => r.base_url === baseUrl);
}

async function acceptedBy(gateway: GatewayHandle, requestId: string | null): Promise<string[]> {
  const timeline = await getJson(gateway.url, `/v1/requests/${requestId}/timeline`);
  return (timeline.json.events as TimelineEvent[]).filter((e) => e.type === 'upstream-accepted').map((e) => e.detail!);
}

describe('a gateway over replicas, one of which fails every request its own way', () => {
  it('moves requests off a replica that sends its headers and then nothing (a wedged vLLM engine), and rests it', async () => {
    const wedged = await fake((_req, res) => sseHeaders(res));
    const good = await sim();
    const gateway = await gatewayOver({ baseUrl: [wedged.baseUrl, good.url] });

    const streamed = await streamChat(gateway.url, { ...body, stream: true });
    expect(streamed.chunks.filter((c) => c.error)).toEqual([]);
    expect(streamed.done).toBe(true);
    expect(streamed.content.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect((await postJson(gateway.url, '/v1/chat/completions', body)).status).toBe(200);
    // Each request found it either wedged (and moved on) or resting: it is not tried again while it rests.
    expect(wedged.requests).toHaveLength(1);

    const replica = await replicaHealth(gateway, wedged.baseUrl);
    expect(replica).toMatchObject({ healthy: false, accepted: 0, failures: 1, consecutive_failures: 1 });
    expect(['resting', 'probing']).toContain(replica.state);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain(`conveyor_upstream_replica_healthy{replica="${wedged.baseUrl}"} 0`);
  });

  it('moves a request on from a replica that accepted it and then dropped it, and lists both replicas in its timeline', async () => {
    const dropping = await fake((_req, res) => {
      sseHeaders(res);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const good = await sim();
    const gateway = await gatewayOver({ baseUrl: [dropping.baseUrl, good.url] });
    const responses = await Promise.all([0, 1].map(() => postJson(gateway.url, '/v1/chat/completions', body)));
    for (const res of responses) expect(res.status).toBe(200);
    expect(dropping.requests.length).toBeGreaterThan(0);
    const routes = await Promise.all(responses.map((res) => acceptedBy(gateway, res.headers.get('x-conveyor-request-id'))));
    expect(routes).toContainEqual([dropping.baseUrl, good.url]);
    expect(await replicaHealth(gateway, dropping.baseUrl)).toMatchObject({ healthy: false, accepted: 0 });
  });

  it('with --model, moves requests off a replica that does not serve that model (404), and rests it', async () => {
    const other = await sim('other-model');
    const good = await sim();
    const gateway = await gatewayOver({ baseUrl: [other.url, good.url], model: SIM_MODEL });
    const responses = await Promise.all(Array.from({ length: 4 }, () => postJson(gateway.url, '/v1/chat/completions', { ...body, model: 'anything' })));
    for (const res of responses) expect(res.status).toBe(200);
    expect(await replicaHealth(gateway, other.url)).toMatchObject({ healthy: false, accepted: 0 });
  });

  it('without --model, a 404 for the model the client named still reaches the client', async () => {
    const good = await sim();
    const other = await sim('other-model');
    const gateway = await gatewayOver({ baseUrl: [good.url, other.url] });
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...body, model: 'no-such-model' });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('model_not_found');
  });

  it('moves requests off a replica whose engine is dead (a bare 500 to everything), and rests it; the last replica’s error reaches the client', async () => {
    // vLLM with VLLM_KEEP_ALIVE_ON_ENGINE_DEATH once its engine died: 500, no body.
    const dead = await fake((_req, res) => void res.writeHead(500).end());
    const good = await sim();
    const gateway = await gatewayOver({ baseUrl: [dead.baseUrl, good.url] });
    const responses = await Promise.all(Array.from({ length: 4 }, () => postJson(gateway.url, '/v1/chat/completions', body)));
    for (const res of responses) expect(res.status).toBe(200);
    expect(await replicaHealth(gateway, dead.baseUrl)).toMatchObject({ healthy: false, accepted: 0 });

    await good.close();
    const res = await postJson(gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(502);
  });

  it('on a forwarded endpoint too, drops a bare 500 or a 401 answer from one replica and tries the next, resting the first', async () => {
    for (const status of [500, 401]) {
      const bad = await fake((_req, res) => {
        // A dead engine's 500 says nothing (a 500 that says why moves on without resting: upstream-forward-replicas.test.ts).
        if (status === 500) return void res.writeHead(500).end();
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `HTTP ${status}`, type: 'upstream', param: null, code: status } }));
      });
      const good = await fake((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[]}');
      });
      const gateway = await gatewayOver({ baseUrl: [bad.baseUrl, good.baseUrl] });
      const res = await fetch(`${gateway.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":"hi"}' });
      expect(res.status).toBe(200);
      expect([bad.requests.length, good.requests.length]).toEqual([1, 1]);
      expect(await replicaHealth(gateway, bad.baseUrl)).toMatchObject({ healthy: false, failures: 1 });
    }
  });
});
