import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson } from '../support/sse-client.ts';

let conveyor: ConveyorHandle;
beforeAll(async () => {
  conveyor = await startTestConveyor();
});
afterAll(async () => {
  await conveyor?.close();
});

// It read "messages: messages must contain at least one message", the field named twice and what
// came not at all; OpenAI's says the array is empty ("Invalid 'messages': empty array").
it('an empty messages array is a 400 on messages that says it was empty', async () => {
  const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [] });
  expect(res.status).toBe(400);
  expect(res.json.error).toEqual({ message: 'messages: expected at least one message, got an empty array', type: 'invalid_request_error', param: 'messages', code: 'invalid_request' });
});
