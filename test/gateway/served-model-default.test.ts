import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson } from '../support/sse-client.ts';

// vLLM serves one model and takes a request without `model` as one for it; so does the gateway
// that names its one model itself (--model): the name was required, though it was never used.
describe('a chat request without model', () => {
  let named: ConveyorHandle;
  let open: ConveyorHandle;
  beforeAll(async () => {
    [named, open] = await Promise.all([startTestConveyor({ gateway: { upstream: { model: SIM_MODEL } } }), startTestConveyor()]);
  });
  afterAll(async () => {
    await Promise.all([named?.close(), open?.close()]);
  });

  const request = { scenario: 'calculator', messages: [{ role: 'user', content: 'What is 200*701?' }] };

  it('is for the model the gateway names with --model', async () => {
    const res = await postJson(named.gateway.url, '/v1/chat/completions', request);
    expect(res.status).toBe(200);
    expect(res.json.model).toBe(SIM_MODEL);
    expect(res.json.choices[0].message.content).toContain('140200');
  });

  it('is refused on its param where the client names the model', async () => {
    const res = await postJson(open.gateway.url, '/v1/chat/completions', request);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
  });
});
