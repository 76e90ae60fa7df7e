import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';

// `/v1/x/..%2F..%2Fhealth` is one path segment to the gateway (an escaped slash is no separator),
// so it passed as a /v1 endpoint and went upstream as written. A server or proxy that decodes the
// path and then resolves its dot segments (nginx's `proxy_pass http://vllm/;`, Go's ServeMux) routes
// it to `/health`, `/metrics` or vLLM's `/reset_prefix_cache`, outside the /v1 the gateway passes
// on, or to `/v1/chat/completions` past the gateway's own chat route.
describe('a forwarded path whose percent-escapes decode to a dot segment', () => {
  let upstream: Server;
  let gateway: GatewayHandle;
  const received: string[] = [];
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      received.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    gateway = await startGateway({ port: 0, apiKeys: ['client-key'], upstream: { baseUrl } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    upstream?.close();
  });

  const get = (path: string) => fetch(`${gateway.url}${path}`, { headers: { authorization: 'Bearer client-key' } });

  it('is refused with a 400 before the upstream hears of it', async () => {
    for (const path of ['/v1/x/..%2F..%2Fhealth', '/v1/x/..%2fchat/completions', '/v1/%2e%2e%2Fmetrics', '/v1/.%2E%2Freset_prefix_cache', '/v1/files/.%2Fembeddings']) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('dot segment') } });
    }
    expect(received).toEqual([]);
  });

  it('leaves a name with dots in it, or an escaped slash beside other text, alone', async () => {
    received.length = 0;
    for (const path of ['/v1/files/a..b', '/v1/files/a%2F..b', '/v1/files/..a', '/v1/files/%2E%2Ehidden']) {
      expect((await get(path)).status, path).toBe(200);
    }
    expect(received).toEqual(['/v1/files/a..b', '/v1/files/a%2F..b', '/v1/files/..a', '/v1/files/%2E%2Ehidden']);
  });
});
