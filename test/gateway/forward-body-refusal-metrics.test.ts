import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../gateway/config.ts';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';

/**
 * An upstream that answers every request `{}` and counts them, and a gateway with `options` in
 * front of it, for the suite.
 */
function countedForward(options: Omit<GatewayConfigInput, 'upstream'> & { model?: string }) {
  const handles = { asked: 0 } as { asked: number; gateway: GatewayHandle };
  let upstream: Server;
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      handles.asked += 1;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { model, ...gateway } = options;
    const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    handles.gateway = await startGateway({ port: 0, ...gateway, upstream: { baseUrl, ...(model ? { model } : {}) } }, { tools: new Map() });
  });
  afterAll(async () => {
    await handles.gateway?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });
  return handles;
}

async function forwardedCounts(gateway: GatewayHandle): Promise<string[]> {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('conveyor_forwarded_requests_total{'))
    .sort();
}

// conveyor_forwarded_requests_total counts forwarded requests "by the status the client got, and
// the gateway's error code when the upstream gave no answer"; one the gateway refused while reading
// its body (too large, not JSON where it must read it, a wrong type) was counted nowhere at all.
describe('regression: a forwarded request refused while its body is read is counted', () => {
  const forward = countedForward({ maxBodyBytes: 100, model: 'served-name' });

  it('by the 413 and the 400 its client got, never reaching the upstream', async () => {
    const post = (body: string) => fetch(`${forward.gateway.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect((await post(JSON.stringify({ input: 'x'.repeat(200) }))).status).toBe(413);
    expect((await post('{"input": ')).status).toBe(400);
    expect(forward.asked).toBe(0);
    expect(await forwardedCounts(forward.gateway)).toEqual([
      'conveyor_forwarded_requests_total{status="400",error="invalid_request"} 1',
      'conveyor_forwarded_requests_total{status="413",error="request_too_large"} 1',
    ]);
  });
});

// The same promise, for the refusals before the forward route ran: no key, a page on another
// origin, a path that decodes to one of the gateway's own routes.
describe('regression: a forwarded request refused before it is forwarded is counted', () => {
  const forward = countedForward({ apiKeys: ['k'] });

  it('by the 401, 403 and 400 its client got, never reaching the upstream', async () => {
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${forward.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
    expect((await post('/v1/embeddings', {})).status).toBe(401);
    expect((await post('/v1/embeddings', { authorization: 'Bearer k', origin: 'https://elsewhere.example' })).status).toBe(403);
    expect((await post('/v1/chat%2Fcompletions', { authorization: 'Bearer k' })).status).toBe(400);
    expect((await post('/v1/embeddings', { authorization: 'Bearer k' })).status).toBe(200);
    expect(forward.asked).toBe(1);
    expect(await forwardedCounts(forward.gateway)).toEqual([
      'conveyor_forwarded_requests_total{status="200"} 1',
      'conveyor_forwarded_requests_total{status="400",error="invalid_request"} 1',
      'conveyor_forwarded_requests_total{status="401",error="invalid_api_key"} 1',
      'conveyor_forwarded_requests_total{status="403",error="origin_not_allowed"} 1',
    ]);
  });
});
