import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's defaults through Starlette's CORSMiddleware (allow_origins, allow_methods and
// allow_headers ["*"], no credentials), and its AuthenticationMiddleware for --api-key.

const messages = [{ role: 'user', content: 'say hello' }];
const PAGE = 'http://localhost:3000';

let open: SimHandle;
let keyed: SimHandle;

beforeAll(async () => {
  const scenarios = [fixedReplyScenario('hello', 'Hello world!')];
  [open, keyed] = await Promise.all([startSim({ profile: 'fast-test', scenarios }), startSim({ profile: 'fast-test', scenarios, apiKey: 'sekret' })]);
});
afterAll(() => Promise.all([open?.close(), keyed?.close()]));

describe('CORS', () => {
  it('answers a preflight with 200, every method, the requested headers echoed and a 600 s max-age', async () => {
    const res = await fetch(`${open.url}/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: PAGE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('adds access-control-allow-origin: * to responses, streamed ones and errors included, only when the request has an Origin', async () => {
    const whole = await postChat(open.url, { messages }, { headers: { 'content-type': 'application/json', origin: PAGE } });
    expect(whole.headers.get('access-control-allow-origin')).toBe('*');
    await whole.arrayBuffer();
    const streamed = await postChat(open.url, { messages, stream: true }, { headers: { 'content-type': 'application/json', origin: PAGE } });
    expect(streamed.headers.get('access-control-allow-origin')).toBe('*');
    expect((await allSseData(streamed)).at(-1)).toBe('[DONE]');
    const missing = await fetch(`${open.url}/nope`, { headers: { origin: PAGE } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');

    const noOrigin = await fetch(`${open.url}/models`);
    expect(noOrigin.headers.get('access-control-allow-origin')).toBeNull();
    // An OPTIONS that is no preflight reaches the routes, as in vLLM: FastAPI's 405.
    expect((await fetch(`${open.url}/models`, { method: 'OPTIONS' })).status).toBe(405);
  });

  it('names the origin instead of "*" for a request with cookies, as Starlette does', async () => {
    const res = await fetch(`${open.url}/models`, { headers: { origin: PAGE, cookie: 'a=b' } });
    expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(res.headers.get('vary')).toBe('Origin');
  });
});

describe('--api-key', () => {
  it('answers /v1 requests without the key with 401 {"error": "Unauthorized"}', async () => {
    for (const authorization of [undefined, 'Bearer wrong', 'Basic sekret', 'sekret']) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization && { authorization }) };
      const res = await postChat(keyed.url, { messages }, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'Unauthorized' });
    }
    expect((await fetch(`${keyed.url}/models`)).status).toBe(401);
  });

  it('serves requests with the key, the scheme in any case', async () => {
    for (const authorization of ['Bearer sekret', 'bearer sekret']) {
      const res = await postChat(keyed.url, { messages, max_tokens: 2 }, { headers: { 'content-type': 'application/json', authorization } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });

  it('leaves /health, /metrics, /version, /ping and CORS preflights open', async () => {
    const origin = keyed.url.replace(/\/v1$/, '');
    for (const path of ['/health', '/metrics', '/version', '/ping']) expect((await fetch(`${origin}${path}`)).status).toBe(200);
    const preflight = await fetch(`${keyed.url}/chat/completions`, { method: 'OPTIONS', headers: { origin: PAGE, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(200);
  });
});
