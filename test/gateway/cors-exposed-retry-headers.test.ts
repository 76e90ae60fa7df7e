import { describe, expect, it } from 'vitest';
import { startGateway } from '../../gateway/server.ts';
import { closedAfterEach } from '../support/closed-after-each.ts';

const APP = 'http://localhost:5173';
const { keep } = closedAfterEach();

// A page's fetch sees only the response headers CORS exposes (and the safelisted few): the
// OpenAI SDK in the page (dangerouslyAllowBrowser) reads x-should-retry and retry-after to decide
// whether to send a failed request again. Unexposed, a 5xx after the gateway's tools ran
// (x-should-retry: false) was retried, running the tools again, effects and all, and a 503
// gateway_busy's Retry-After was not waited for.
describe("regression: the headers OpenAI's SDKs retry by are exposed to an allowed origin's page", () => {
  it('lists x-should-retry and retry-after beside the request ids, on errors too', async () => {
    const gw = keep(await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, allowedOrigins: [APP], apiKeys: ['k1'] }, { tools: new Map() }));
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    const exposed = res.headers.get('access-control-expose-headers')!.split(',').map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['x-conveyor-request-id', 'x-request-id', 'x-should-retry', 'retry-after']));
  });
});
