import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { closedAfterEach } from '../support/closed-after-each.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { getJson } from '../support/sse-client.ts';
import { sseHeaders, type TestUpstream, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';

interface ReplicaHealth {
  healthy: boolean;
  failures: number;
  accepted: number;
}

// A replica counts as healthy once its forwarded answer's first byte arrives, not at its headers,
// and an answer it breaks off after them counts against it, as on the chat route (findings s38/forward #1).
describe("a forwarded answer and its replica's health", () => {
  const { upstream, keep } = closedAfterEach();

  /** A fresh gateway over `replicas`: its first request goes to the first one listed (all equally loaded). */
  async function over(replicas: TestUpstream[], timeouts: Record<string, number> = {}): Promise<GatewayHandle> {
    return keep(await startGateway({ port: 0, upstream: { baseUrl: replicas.map((r) => r.baseUrl), timeouts } }, { tools: new Map() }));
  }

  async function health(gw: GatewayHandle, replica: TestUpstream): Promise<ReplicaHealth> {
    const { json } = await getJson(gw.url, '/health');
    return json.upstream_replicas.find((r: { base_url: string }) => r.base_url === replica.baseUrl);
  }

  const completions = (gw: GatewayHandle, init: RequestInit = {}) =>
    fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"x","stream":true}', ...init });

  const answering: UpstreamHandler = (_req, res) => {
    sseHeaders(res);
    res.end('data: {"choices":[{"text":"ok"}]}\n\ndata: [DONE]\n\n');
  };

  it('regression: a replica that sends its headers and then nothing is not counted healthy, and rests once its answer is cut', async () => {
    // vLLM with a wedged engine: 200 and event-stream headers, then silence.
    const wedged = await upstream((_req, res) => sseHeaders(res));
    const ok = await upstream(answering);
    const gw = await over([wedged, ok], { firstTokenMs: 300, idleMs: 300 });

    const cut = await completions(gw);
    expect(cut.status).toBe(200);
    await expect(cut.text()).rejects.toThrow();
    expect(await health(gw, wedged)).toMatchObject({ healthy: false, failures: 1, accepted: 0 });

    // Resting, it is passed over: the next request goes to the other replica.
    const next = await completions(gw);
    expect(await next.text()).toContain('[DONE]');
    expect(ok.requests).toHaveLength(1);
    expect(wedged.requests).toHaveLength(1);
    expect(await health(gw, ok)).toMatchObject({ healthy: true, accepted: 1 });
  });

  it('counts a connection the replica drops mid-answer against it, after its first byte counted for it', async () => {
    const dropping = await upstream((_req, res) => {
      sseHeaders(res);
      res.write('data: {"choices":[{"text":"par"}]}\n\n', () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const ok = await upstream(answering);
    const gw = await over([dropping, ok]);
    const res = await completions(gw);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(await health(gw, dropping)).toMatchObject({ healthy: false, failures: 1, accepted: 1 });
  });

  it('does not count a client that leaves mid-answer against the replica', async () => {
    let answer: ServerResponse | undefined;
    const endless = await upstream((_req, res) => {
      answer = res;
      sseHeaders(res);
      res.write('data: {"choices":[{"text":"a"}]}\n\n');
    });
    const ok = await upstream(answering);
    const gw = await over([endless, ok]);
    const leaving = new AbortController();
    const res = await completions(gw, { signal: leaving.signal });
    const reader = res.body!.getReader();
    await reader.read();
    leaving.abort();
    await eventually(() => answer?.destroyed === true || answer?.socket?.destroyed === true, 'the upstream request was cancelled');
    expect(await health(gw, endless)).toMatchObject({ healthy: true, failures: 0, accepted: 1 });
  });

  it("does not take a 4xx for proof of health: a dead engine's FastAPI still answers 404 for an unknown path", async () => {
    const fastApi = await upstream((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"detail":"Not Found"}');
    });
    const ok = await upstream(answering);
    const gw = await over([fastApi, ok]);
    const res = await fetch(`${gw.url}/v1/no-such-endpoint`);
    expect(res.status).toBe(404);
    expect(await health(gw, fastApi)).toMatchObject({ healthy: true, failures: 0, accepted: 0 });

    // An answer it serves whole is: counted once the answer has come.
    const served = await fetch(`${gw.url}/v1/no-such-endpoint`);
    expect(served.status).toBe(200);
    await served.text();
    expect(await health(gw, ok)).toMatchObject({ healthy: true, failures: 0, accepted: 1 });
  });
});
