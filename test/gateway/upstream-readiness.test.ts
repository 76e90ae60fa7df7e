import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfigSchema, type GatewayConfigInput } from '../../gateway/config.ts';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { UpstreamReadiness } from '../../gateway/upstream-readiness.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { getJson } from '../support/sse-client.ts';

// Nothing listens on port 9 (discard) on loopback: connection refused.
const REFUSED = 'http://127.0.0.1:9/v1';

/** An upstream whose /models waits `delayMs` before answering, and counts the asks. */
async function countingUpstream(delayMs: number): Promise<{ url: string; hits: number; server: Server }> {
  const upstream = { url: '', hits: 0, server: createServer() };
  upstream.server.on('request', (_req, res) => {
    upstream.hits += 1;
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'm' }] })), delayMs);
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/v1`;
  return upstream;
}

describe('GET /health/ready (readiness: the upstream answers)', () => {
  let sim: SimHandle;
  const gateways: GatewayHandle[] = [];
  beforeAll(async () => {
    sim = await startSim({ profile: E2E_PROFILE });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await sim?.close();
  });

  async function gateway(upstream: GatewayConfigInput['upstream'], extra: Partial<GatewayConfigInput> = {}): Promise<GatewayHandle> {
    const g = await startGateway({ port: 0, upstream, ...extra }, { tools: new Map() });
    gateways.push(g);
    return g;
  }

  it('is 200 "ready" when the upstream lists its models, and needs no client key', async () => {
    const g = await gateway({ baseUrl: sim.url }, { apiKeys: ['s3cret'] });
    const res = await getJson(g.url, '/health/ready');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready', upstream: [{ base_url: sim.url, ready: true, latency_ms: expect.any(Number) }] });
  });

  it('is 503 "unavailable" with the reason while /health (liveness) stays 200', async () => {
    const g = await gateway({ baseUrl: REFUSED });
    const ready = await getJson(g.url, '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.json.status).toBe('unavailable');
    expect(ready.json.upstream).toEqual([{ base_url: REFUSED, ready: false, latency_ms: expect.any(Number), error: { code: 'upstream_connection_error', message: expect.stringContaining('127.0.0.1:9') } }]);
    expect((await getJson(g.url, '/health')).status).toBe(200);
  });

  it('is 503 when the upstream does not serve the model the gateway sends every request as', async () => {
    const g = await gateway({ baseUrl: sim.url, model: 'no-such-model' });
    const res = await getJson(g.url, '/health/ready');
    expect(res.status).toBe(503);
    expect(res.json.model).toBe('no-such-model');
    expect(res.json.upstream[0].error.code).toBe('model_not_served');
    expect(res.json.upstream[0].error.message).toContain(SIM_MODEL);
    const served = await gateway({ baseUrl: sim.url, model: SIM_MODEL });
    expect((await getJson(served.url, '/health/ready')).status).toBe(200);
  });

  it('is ready while one replica of several answers, and shows which is down', async () => {
    const g = await gateway({ baseUrl: [REFUSED, sim.url] });
    const res = await getJson(g.url, '/health/ready');
    expect(res.status).toBe(200);
    expect(res.json.upstream.map((r: { base_url: string; ready: boolean }) => [r.base_url, r.ready])).toEqual([
      [REFUSED, false],
      [sim.url, true],
    ]);
  });

  /**
   * A 429 is a server that is up, speaks the API and took the key, and is too busy for more now:
   * counted not ready, every gateway in front of one busy vLLM left its load balancer at once (all
   * turning clients away with no Retry-After, where the chat route passes vLLM's 429 and its
   * Retry-After on), and came back with the load, flapping as it did.
   */
  it('counts a replica answering 429 as ready, and says it is busy and for how long', async () => {
    const busy = await startTestUpstream((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(JSON.stringify({ error: { message: 'Too many requests', type: 'TooManyRequests', param: null, code: 429 } }));
    });
    try {
      const g = await gateway({ baseUrl: busy.baseUrl });
      const res = await getJson(g.url, '/health/ready');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        status: 'ready',
        upstream: [{ base_url: busy.baseUrl, ready: true, latency_ms: expect.any(Number), busy: { status: 429, retry_after: '3', message: expect.stringContaining('Too many requests') } }],
      });
    } finally {
      await busy.close();
    }
  });

  it('answers HEAD without a body, for probes that only read the status', async () => {
    const g = await gateway({ baseUrl: REFUSED });
    const res = await fetch(`${g.url}/health/ready`, { method: 'HEAD' });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('');
  });
});

describe('UpstreamReadiness (probes shared and reused)', () => {
  const config = (baseUrl: string, timeouts: Record<string, number> = {}) => gatewayConfigSchema.parse({ upstream: { baseUrl, timeouts } }).upstream;

  it('concurrent checks share one probe, and its answer is reused until cacheMs has passed', async () => {
    const upstream = await countingUpstream(50);
    try {
      let now = 0;
      const readiness = new UpstreamReadiness(config(upstream.url), { cacheMs: 1000, now: () => now });
      const answers = await Promise.all([readiness.check(), readiness.check(), readiness.check()]);
      expect(answers.map((a) => a.status)).toEqual(['ready', 'ready', 'ready']);
      expect(upstream.hits).toBe(1);
      now = 999;
      await readiness.check();
      expect(upstream.hits).toBe(1);
      now = 1000;
      await readiness.check();
      expect(upstream.hits).toBe(2);
    } finally {
      await new Promise((resolve) => upstream.server.close(resolve));
    }
  });

  it('an upstream that does not answer in time is not ready, and says how long it was given', async () => {
    const upstream = await countingUpstream(5_000);
    try {
      const readiness = new UpstreamReadiness(config(upstream.url), { probeTimeoutMs: 100 });
      const report = await readiness.check();
      expect(report.status).toBe('unavailable');
      expect(report.upstream[0]!.error).toEqual({ code: 'upstream_total_timeout', message: `upstream ${upstream.url}/models did not answer within 100 ms` });
    } finally {
      upstream.server.closeAllConnections();
      await new Promise((resolve) => upstream.server.close(resolve));
    }
  });

  it("the upstream's own total timeout bounds the probe when it is shorter", async () => {
    const upstream = await countingUpstream(5_000);
    try {
      const report = await new UpstreamReadiness(config(upstream.url, { totalMs: 80 })).check();
      expect(report.upstream[0]!.error?.message).toMatch(/within 80 ms$/);
    } finally {
      upstream.server.closeAllConnections();
      await new Promise((resolve) => upstream.server.close(resolve));
    }
  });
});
