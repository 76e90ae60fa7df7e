import { request, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../gateway/config.ts';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { chunkedUpload } from '../support/chunked-upload.ts';
import { closedAfterEach } from '../support/closed-after-each.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { getJson } from '../support/sse-client.ts';
import { startSlowReader, type SlowReader } from '../support/slow-reader.ts';
import { sseHeaders, type TestUpstream } from '../llm-client/upstream-test-server.ts';

// clientStallMs and upstream.timeouts.totalMs hold on forwarded requests as on the chat route
// (findings s38/forward #2 and #3).
describe('the limits a forwarded request shares with a chat', () => {
  const { upstream, keep } = closedAfterEach();
  let reader: SlowReader | undefined;
  // Registered after closedAfterEach's hook, so it runs before it (vitest runs after-hooks as a stack).
  afterEach(() => {
    reader?.kill();
    reader = undefined;
  });

  /** `timeouts`: the upstream's (upstream.timeouts). */
  async function gateway(replicas: TestUpstream[], config: Omit<Partial<GatewayConfigInput>, 'upstream'> & { timeouts?: Record<string, number> } = {}): Promise<GatewayHandle> {
    const { timeouts, ...rest } = config;
    const baseUrl = replicas.length === 1 ? replicas[0]!.baseUrl : replicas.map((r) => r.baseUrl);
    return keep(await startGateway({ port: 0, ...rest, upstream: { baseUrl, timeouts } }, { tools: new Map() }));
  }

  /**
   * A server that answers only once it has generated everything: 2 s here (undici checks a
   * headers timeout about every 500 ms, so 200 ms ones run out within about 1 s).
   */
  const generating = async (_req: unknown, res: ServerResponse) => {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"choices":[{"text":"done"}]}');
  };

  it('regression: cuts off a client that takes nothing of a forwarded answer for clientStallMs, freeing its upstream request and its place', async () => {
    // A large answer written as fast as the gateway takes it, until it is cancelled.
    let cancelled = false;
    const big = await upstream((req, res) => {
      if (!req.url?.endsWith('/big')) return void res.end('{"small":true}');
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.once('close', () => (cancelled = !res.writableFinished));
      const piece = Buffer.alloc(64 * 1024, 'x');
      const more = (): void => {
        for (let i = 0; i < 4096 && !res.destroyed; i++) if (!res.write(piece)) return void res.once('drain', more);
        res.end();
      };
      more();
    });
    const gw = await gateway([big], { clientStallMs: 300, maxConcurrentRequests: 1 });
    reader = await startSlowReader(gw.url, '/v1/big', {});
    expect(reader.head).toMatch(/^HTTP\/1\.1 200/);
    await eventually(() => cancelled, 'the stalled answer cancelled its upstream request', 10_000);
    // Its place is free: the next request is let in and answered.
    const next = await fetch(`${gw.url}/v1/small`);
    expect(await next.json()).toEqual({ small: true });
    const { json } = await getJson(gw.url, '/health');
    expect(json.requests).toMatchObject({ running: 0 });
  }, 20_000);

  it('answers 504 upstream_total_timeout when totalMs runs out before any replica answered, failover attempts included', async () => {
    const refusing = await upstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('');
    });
    // Holds the request without an answer (an engine stuck in prefill behind its queue).
    let held: ServerResponse | undefined;
    const silent = await upstream((_req, res) => void (held = res));
    const gw = await gateway([refusing, silent], { timeouts: { totalMs: 500, headersMs: 5_000 } });
    const res = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":"x"}' });
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_total_timeout');
    // Both were tried, in order, and the second one's request was cancelled.
    expect([refusing.requests.length, silent.requests.length]).toEqual([1, 1]);
    await silent.requestSocketClosed(0);
    expect(held?.writableEnded).toBe(false);
    // The request's own budget ran out, not the replica: it does not rest for it.
    const { json } = await getJson(gw.url, '/health');
    expect(json.upstream_replicas.find((r: { base_url: string }) => r.base_url === silent.baseUrl)).toMatchObject({ healthy: true, failures: 0 });
  });

  it('waits for the headers of an answer that comes whole (no `stream: true`) past a stream\'s first-token wait; a stream still times out, and rests its replica', async () => {
    const gw = await gateway([await upstream(generating), await upstream(generating)], { timeouts: { headersMs: 200, firstTokenMs: 200 } });
    const health = async () => (await getJson(gw.url, '/health')).json.upstream_replicas as Array<{ healthy: boolean; failures: number }>;
    const post = (body: string) => fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    // Before: a 504 upstream_headers_timeout at 200 ms, and a healthy replica rested.
    const answered = await post('{"prompt":"write a long story","max_tokens":4000}');
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ choices: [{ text: 'done' }] });
    expect((await health()).map((r) => [r.healthy, r.failures])).toEqual([[true, 0], [true, 0]]);

    // Both replicas tried, each past the wait for a stream's headers.
    const streamed = await post('{"prompt":"write a long story","stream":true}');
    expect(streamed.status).toBe(504);
    expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('upstream_headers_timeout');
    expect((await health()).map((r) => r.healthy)).toEqual([false, false]);
  }, 20_000);

  it("waits as long for the headers of a request whose body it streamed through unread: a chunked JSON upload, an audio file (regression: a 504 at a stream's wait)", async () => {
    const gw = await gateway([await upstream(generating)], { timeouts: { headersMs: 200, firstTokenMs: 200 } });
    const upload = (contentType: string, parts: string[]) =>
      fetch(`${gw.url}/v1/${contentType === 'application/json' ? 'completions' : 'audio/transcriptions'}`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: chunkedUpload(parts),
        duplex: 'half',
      } as RequestInit);
    const json = await upload('application/json', ['{"prompt":"write a long story",', '"max_tokens":4000}']);
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ choices: [{ text: 'done' }] });
    // Quoted: the test upstream reads every body as JSON.
    const audio = await upload('audio/wav', ['"RIFF', '....WAVE"']);
    expect(audio.status).toBe(200);
    expect(await audio.json()).toEqual({ choices: [{ text: 'done' }] });
  }, 20_000);

  it('cuts a forwarded answer still streaming when totalMs runs out', async () => {
    let events = 0;
    const streaming = await upstream(async (_req, res) => {
      sseHeaders(res);
      for (; events < 40 && !res.destroyed; events++) {
        res.write(`data: {"n":${events}}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      res.end('data: [DONE]\n\n');
    });
    // 1 s, not 500 ms: the head and first event, sent at once, must beat it on a loaded machine;
    // the upstream's 40 events take 2 s, so without the cut [DONE] would still come.
    const gw = await gateway([streaming], { timeouts: { totalMs: 1_000 } });
    const res = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stream":true}' });
    expect(res.status).toBe(200);
    const body = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await body.read();
          if (done) return;
          text += decoder.decode(value, { stream: true });
        }
      })(),
    ).rejects.toThrow();
    expect(text).toContain('data: {"n":0}');
    expect(text).not.toContain('[DONE]');
    await streaming.requestSocketClosed(0);
  });

  /** A POST declared `length` bytes long under Expect: 100-continue: its status, and whether the gateway asked for the body. */
  function expectContinue(url: string, length: number): Promise<{ status: number; continued: boolean }> {
    return new Promise((resolve, reject) => {
      let continued = false;
      const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(length), expect: '100-continue' } });
      req.on('continue', () => {
        continued = true;
        req.end(`{"p":"${'x'.repeat(length - 8)}"}`);
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode!, continued });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
  }

  it('refuses a forwarded JSON body it must read whole (upstream.model) declared over maxBodyBytes before the client sends it, as the chat route does', async () => {
    const echo = await upstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const named = keep(await startGateway({ port: 0, maxBodyBytes: 1000, upstream: { baseUrl: echo.baseUrl, model: 'served-name' } }, { tools: new Map() }));
    expect(await expectContinue(`${named.url}/v1/completions`, 5000)).toEqual({ status: 413, continued: false });
    // Without a model to put in, the body is piped through unread, whatever its size.
    const piped = await gateway([echo], { maxBodyBytes: 1000 });
    expect(await expectContinue(`${piped.url}/v1/completions`, 5000)).toEqual({ status: 200, continued: true });
  });
});
