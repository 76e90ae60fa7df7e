import { describe, expect, it } from 'vitest';
import { SIM_MODEL } from '../support/e2e-profile.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';
import { getJson, postJson } from '../support/sse-client.ts';

// A first-time user who points a client at the gateway's root (`baseURL: "http://host:8080"`) sends
// POST /chat/completions; the 404 should say where the API is, not only that there is no route.
describe('a request for a /v1 route without its /v1', () => {
  const servers = fastSimGateway();

  it('is a 404 that names the path under /v1', async () => {
    const chat = await postJson(servers.gateway.url, '/chat/completions', { model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(404);
    expect(chat.json.error).toMatchObject({ code: 'not_found', message: 'no route for POST /chat/completions: the API is under /v1 (POST /v1/chat/completions)' });
    const models = await getJson(servers.gateway.url, '/models');
    expect(models.status).toBe(404);
    expect(models.json.error.message).toBe('no route for GET /models: the API is under /v1 (GET /v1/models)');
  });

  it('keeps the plain 404 for a path that is no route under /v1 either', async () => {
    const res = await getJson(servers.gateway.url, '/nope');
    expect(res.status).toBe(404);
    expect(res.json.error.message).toBe('no route for GET /nope');
  });
});
