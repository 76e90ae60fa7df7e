import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';
import { modelsRoutes } from '../../gateway/models-routes.ts';
import { UpstreamReplicas } from '../../llm-client/upstream-replicas.ts';
import { getJson } from '../support/sse-client.ts';
import { startTestUpstream, type TestUpstream } from '../llm-client/upstream-test-server.ts';

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A replica whose `/models` lists `id`; its requests are recorded. */
async function replica(id: string): Promise<TestUpstream> {
  const server = await startTestUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id, object: 'model' }] }));
  });
  open.push(server);
  return server;
}

/** The models routes alone, served on 127.0.0.1:0. */
async function serve(routes: ReturnType<typeof modelsRoutes>): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const route = routes.find((r) => r.method === req.method && r.pattern.test(req.url ?? ''))!;
    route.handler(req, res, {}).catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('GET /v1/models over replicas', () => {
  it('does not ask a replica that rests after a failure; asks every one when all rest', async () => {
    const [a, b] = [await replica('from-a'), await replica('from-b')];
    const config = gatewayConfigSchema.parse({ upstream: { baseUrl: [a.baseUrl, b.baseUrl] } });
    const replicas = new UpstreamReplicas([a.baseUrl, b.baseUrl]);
    replicas.failed(replicas.replicas[0]!);
    const url = await serve(modelsRoutes(config, replicas));

    const models = await getJson(url, '/v1/models');
    expect(models.status).toBe(200);
    expect(models.json.data[0].id).toBe('from-b');
    expect([a.requests.length, b.requests.length]).toEqual([0, 1]);

    // Both rest now, and b is gone: the list can only come from a, asked since every one rests.
    replicas.failed(replicas.replicas[1]!);
    await b.close();
    const fromA = await getJson(url, '/v1/models');
    expect(fromA.status).toBe(200);
    expect(fromA.json.data[0].id).toBe('from-a');
  });
});
