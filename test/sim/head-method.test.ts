import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

// vLLM declares its routes with FastAPI's @router.get (/health, /v1/models, /version, ...), and
// FastAPI's APIRoute takes exactly the methods it is given: unlike Starlette's own Route it adds no
// HEAD. So a HEAD probe of a real vLLM gets 405 {"detail":"Method Not Allowed"}, `Allow: GET`; a
// simulator that answered 200 hid that from whoever set up a HEAD health check against it.

let sim: SimHandle;
let origin: string;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test' });
  origin = sim.url.replace(/\/v1$/, '');
});
afterAll(() => sim.close());

describe('HEAD', () => {
  it('is 405 on the GET routes, with Allow: GET', async () => {
    for (const path of ['/health', '/v1/models', '/version']) {
      const res = await fetch(`${origin}${path}`, { method: 'HEAD' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow'), path).toBe('GET');
    }
  });

  it('leaves GET as it was, and names only GET in a wrong method\'s Allow', async () => {
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    expect((await fetch(`${origin}/v1/models`)).status).toBe(200);
    const wrong = await fetch(`${origin}/health`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(await wrong.json()).toEqual({ detail: 'Method Not Allowed' });
  });

  // prometheus_client's ASGI app, mounted at /metrics, answers whatever the method.
  it('still gets the metrics, which vLLM mounts as an app of their own', async () => {
    expect((await fetch(`${origin}/metrics`, { method: 'HEAD' })).status).toBe(200);
  });
});
