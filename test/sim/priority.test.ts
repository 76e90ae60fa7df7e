import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's `priority` (protocol.py: `priority: int = 0` on both request models). vLLM V1, the only
// engine from v0.11, takes a non-zero priority under its default FCFS policy and ignores it (the
// V0 engine refused it: "Got priority 5 but Priority scheduling is not enabled."; the V1 check
// proposed in vllm-project/vllm#23043 was closed unmerged): sim/README.md, Errors. Only the type is
// checked, as pydantic checks it.

const messages = [{ role: 'user', content: 'say hello' }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

describe('priority', () => {
  it('serves a non-zero priority, as vLLM V1 with its default FCFS scheduler does', async () => {
    for (const priority of [5, -3, '7']) expect((await postChat(sim.url, { messages, priority, max_tokens: 2 })).status).toBe(200);
  });

  it("refuses what pydantic's int refuses, null included (the field is not Optional)", async () => {
    const words = await postChat(sim.url, { messages, priority: 'high' });
    expect(words.status).toBe(400);
    expect(await words.json()).toEqual({
      error: {
        message: "1 validation error:\n  {'type': 'int_parsing', 'loc': ('body', 'priority'), 'msg': 'Input should be a valid integer, unable to parse string as an integer'}",
        type: 'Bad Request',
        param: 'body.priority',
        code: 400,
      },
    });
    const nul = await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', priority: null }) });
    expect(nul.status).toBe(400);
  });
});
