import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';

const AUTH = { authorization: 'Bearer client-key', 'content-type': 'application/json' };

// vLLM's FastAPI (Starlette's redirect_slashes) answers `/v1/completions/` with a 307 to the
// upstream's own absolute URL. Passed on as it was, the client followed it past the gateway,
// straight to the model server's internal address (unreachable, or reached without the gateway's key).
describe("regression: an upstream's redirect points the client at the gateway, not at the upstream's address", () => {
  let conveyor: ConveyorHandle;
  let upstream: Server;
  let based: GatewayHandle;
  let queried: GatewayHandle;
  let upstreamOrigin: string;
  const seen: string[] = [];
  beforeAll(async () => {
    conveyor = await startTestConveyor({ gateway: { apiKeys: ['client-key'] } });
    upstream = createServer((req, res) => {
      req.resume();
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/q/v1/followed?')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      const target: Record<string, string> = {
        '/base/v1/absolute/': `${upstreamOrigin}/base/v1/absolute?x=1`,
        '/base/v1/path-only/': '/base/v1/path-only',
        '/base/v1/elsewhere/': 'https://example.com/docs',
        '/base/v1/rel/x': 'y',
        '/q/v1/followed/?api-version=2024': `${upstreamOrigin}/q/v1/followed?api-version=2024`,
        '/q/v1/both/?api-version=2024&x=1': '/q/v1/both?api-version=2024&x=1',
      };
      res.writeHead(307, { location: target[req.url ?? ''] ?? '/nowhere', 'content-length': '0' }).end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamOrigin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    based = await startGateway({ port: 0, apiKeys: ['client-key'], upstream: { baseUrl: `${upstreamOrigin}/base/v1` } }, { tools: new Map() });
    queried = await startGateway({ port: 0, apiKeys: ['client-key'], upstream: { baseUrl: `${upstreamOrigin}/q/v1?api-version=2024` } }, { tools: new Map() });
  });
  afterAll(async () => {
    await based?.close();
    await queried?.close();
    await conveyor?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('rewrites the simulated vLLM redirect of /v1/completions/ to the gateway path, which the client then follows through the gateway', async () => {
    const body = JSON.stringify({ model: SIM_MODEL, prompt: 'hi', max_tokens: 3 });
    const res = await fetch(`${conveyor.gateway.url}/v1/completions/`, { method: 'POST', headers: AUTH, body, redirect: 'manual' });
    expect(res.status).toBe(307);
    const location = res.headers.get('location')!;
    expect(location).not.toContain(new URL(conveyor.sim!.url).host);
    expect(new URL(location, conveyor.gateway.url).href).toBe(`${conveyor.gateway.url}/v1/completions`);
    // fetch follows a 307 with the same method, body and (same origin) key.
    const followed = await fetch(`${conveyor.gateway.url}/v1/completions/`, { method: 'POST', headers: AUTH, body });
    expect(followed.status).toBe(200);
    expect(((await followed.json()) as { object: string }).object).toBe('text_completion');
  });

  it('maps a Location under the base path, absolute or not, below /v1, keeping its query; leaves one elsewhere alone', async () => {
    const location = async (path: string) => (await fetch(`${based.url}/v1/${path}`, { headers: AUTH, redirect: 'manual' })).headers.get('location');
    expect(await location('absolute/')).toBe('/v1/absolute?x=1');
    expect(await location('path-only/')).toBe('/v1/path-only');
    expect(await location('elsewhere/')).toBe('https://example.com/docs');
    // Resolved against the client's URL (/v1/rel/x) as against the upstream's: /v1/rel/y either way.
    expect(await location('rel/x')).toBe('y');
  });

  // An upstream reached with a base URL's query (Azure's ?api-version=…) echoes it in its redirect;
  // the gateway adds it to every forwarded request, so a Location that kept it had it twice once followed.
  it("leaves the base URL's own query out of the Location, which the gateway adds again when the client follows it", async () => {
    const location = async (path: string) => (await fetch(`${queried.url}/v1/${path}`, { headers: AUTH, redirect: 'manual' })).headers.get('location');
    expect(await location('followed/')).toBe('/v1/followed');
    expect(await location('both/?x=1')).toBe('/v1/both?x=1');
    seen.length = 0;
    const followed = await fetch(`${queried.url}/v1/followed/`, { headers: AUTH });
    expect(followed.status).toBe(200);
    expect(seen).toEqual(['/q/v1/followed/?api-version=2024', '/q/v1/followed?api-version=2024']);
  });
});
