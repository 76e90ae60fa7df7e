import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UpstreamHeadersTimeoutError, UpstreamProtocolError, UpstreamResponseError } from '../../core/errors.ts';
import { closeUpstreamPools, listModels } from '../../llm-client/index.ts';
import { MAX_MODEL_LIST_BYTES } from '../../llm-client/list-models.ts';
import { startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

let upstream: TestUpstream | undefined;

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});
afterAll(closeUpstreamPools);

const vllmModels = {
  object: 'list',
  data: [
    {
      id: 'Qwen/Qwen2.5-7B-Instruct',
      object: 'model',
      created: 1733846400,
      owned_by: 'vllm',
      root: 'Qwen/Qwen2.5-7B-Instruct',
      parent: null,
      max_model_len: 32768,
      permission: [],
    },
  ],
};

describe('listModels', () => {
  it('returns the upstream list as sent, unknown fields kept', async () => {
    upstream = await startTestUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(vllmModels));
    });
    expect(await listModels({ baseUrl: upstream.baseUrl, apiKey: 'k' })).toEqual(vllmModels);
    expect(upstream.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models' });
    expect(upstream.requests[0]?.headers.authorization).toBe('Bearer k');
  });

  it('maps an error body, a malformed answer and a silent server to typed errors', async () => {
    let answer: (res: import('node:http').ServerResponse) => void = () => {};
    upstream = await startTestUpstream((_req, res) => answer(res));
    const { baseUrl } = upstream;

    // A 4xx here is the gateway's set-up (its base URL, its key), not the client's request: a protocol error, 502.
    answer = (res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}');
    await expect(listModels({ baseUrl })).rejects.toThrow(`upstream ${baseUrl}/models answered HTTP 401: bad key (check the upstream's base URL and API key)`);
    await expect(listModels({ baseUrl })).rejects.toMatchObject({ constructor: UpstreamProtocolError, upstreamStatus: 401 });

    answer = (res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"engine dead"}}');
    await expect(listModels({ baseUrl })).rejects.toMatchObject({ status: 500, message: 'engine dead' });
    await expect(listModels({ baseUrl })).rejects.toBeInstanceOf(UpstreamResponseError);

    answer = (res) => res.writeHead(200).end('{"data":"nope"}');
    await expect(listModels({ baseUrl })).rejects.toBeInstanceOf(UpstreamProtocolError);

    answer = () => {};
    await expect(listModels({ baseUrl, timeouts: { headersMs: 100 } })).rejects.toBeInstanceOf(UpstreamHeadersTimeoutError);
  });

  // Review: a 429 read as the gateway's set-up failing ("check the upstream's base URL and API
  // key"), a 502 with its Retry-After dropped, and a 503 lost its Retry-After too.
  it('reads a 429 or 503 as an upstream rate-limited or busy, not a set-up failure, and keeps its Retry-After', async () => {
    let answer: (res: import('node:http').ServerResponse) => void = () => {};
    upstream = await startTestUpstream((_req, res) => answer(res));
    const { baseUrl } = upstream;

    answer = (res) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end('{"error":{"message":"slow down"}}');
    const limited = await listModels({ baseUrl }).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(UpstreamResponseError);
    expect(limited).toMatchObject({ status: 429, retryAfter: '7', message: "the upstream's /models answered HTTP 429: slow down (rate-limited: retry later, Retry-After: 7)" });

    answer = (res) => res.writeHead(503, { 'retry-after': '3' }).end();
    const busy = await listModels({ baseUrl }).catch((error: unknown) => error);
    expect(busy).toMatchObject({ status: 503, retryAfter: '3', message: "the upstream's /models answered HTTP 503 (busy: retry later, Retry-After: 3)" });

    answer = (res) => res.writeHead(429).end();
    const bare = await listModels({ baseUrl }).catch((error: unknown) => error);
    expect(bare).toMatchObject({ status: 429, message: "the upstream's /models answered HTTP 429 (rate-limited: retry later)" });
    expect((bare as UpstreamResponseError).retryAfter).toBeUndefined();
  });

  it('refuses a body past MAX_MODEL_LIST_BYTES without holding it (regression: read whole, however long)', async () => {
    const entry = Buffer.from(`${JSON.stringify({ id: 'm'.repeat(1000), object: 'model' })},`.repeat(1000));
    let sent = 0;
    upstream = await startTestUpstream(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"object":"list","data":[');
      // Endless, as a misbehaving server's: only the client going away stops it.
      while (!res.destroyed) {
        sent += entry.length;
        if (res.write(entry)) continue;
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go).off('close', go);
            resolve();
          };
          res.on('drain', go).on('close', go);
        });
      }
    });
    await expect(listModels({ baseUrl: upstream.baseUrl })).rejects.toThrow(`upstream /models answered more than ${MAX_MODEL_LIST_BYTES / 1024 / 1024} MiB: not a model list`);
    expect(sent).toBeGreaterThan(MAX_MODEL_LIST_BYTES);
  });

  it('surfaces an abort as the signal reason', async () => {
    upstream = await startTestUpstream(() => {});
    const controller = new AbortController();
    const pending = listModels({ baseUrl: upstream.baseUrl, signal: controller.signal });
    while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
