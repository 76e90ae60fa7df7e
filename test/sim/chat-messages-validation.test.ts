import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// An empty conversation and a role no template knows, answered in words a client can act on
// (sim/README.md, Errors): zod's own ("Too small: expected array to have >=1 items", "Invalid
// option: expected one of …") are neither vLLM's nor pydantic's.

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

const EMPTY = { error: { message: 'Conversation must have at least one message', type: 'BadRequestError', param: null, code: 400 } };

describe('messages', () => {
  it('refuses an empty conversation as vLLM serving a Mistral model does, after the model check', async () => {
    const res = await postChat(sim.url, { messages: [] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(EMPTY);
    // vLLM checks the model before it builds the prompt.
    expect((await postChat(sim.url, { model: 'gpt-4o', messages: [] })).status).toBe(404);
  });

  it('refuses it on /tokenize too', async () => {
    const res = await fetch(`${sim.url.replace(/\/v1$/, '')}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [] }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(EMPTY);
  });

  it("refuses an unknown role in pydantic's words for a literal, naming the roles taken", async () => {
    const res = await postChat(sim.url, { messages: [{ role: 'user', content: 'hi' }, { role: 'robot', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message:
          "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'messages', 1, 'role'), 'msg': \"Input should be 'system', 'developer', 'user', 'assistant', 'tool' or 'function'\"}",
        type: 'Bad Request',
        param: 'body.messages.1.role',
        code: 400,
      },
    });
  });
});
