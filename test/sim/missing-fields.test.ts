import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { postChat } from './sim-test-helpers.ts';

// pydantic reports a required field left out as `missing`, "Field required" (whatever the field's
// type), and vLLM's RequestValidationError handler passes that line on in its 400.
let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test' });
});
afterAll(() => sim.close());

async function validationError(res: Response) {
  expect(res.status).toBe(400);
  return ((await res.json()) as { error: { message: string; type: string; param: string | null } }).error;
}

const messages = [{ role: 'user', content: 'hi' }];

describe('a required field left out', () => {
  it('is pydantic\'s `missing`, "Field required", on the chat route', async () => {
    const error = await validationError(await postChat(sim.url, {}));
    expect(error).toMatchObject({ type: 'Bad Request', param: 'body.messages' });
    expect(error.message).toBe("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}");
  });

  it('is `missing` inside a tool too: no function, a function without a name', async () => {
    const noFunction = await validationError(await postChat(sim.url, { messages, tools: [{ type: 'function' }] }));
    expect(noFunction.message).toBe("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'tools', 0, 'function'), 'msg': 'Field required'}");
    const noName = await validationError(await postChat(sim.url, { messages, tools: [{ type: 'function', function: {} }] }));
    expect(noName.message).toBe("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'tools', 0, 'function', 'name'), 'msg': 'Field required'}");
  });

  it('is `missing` for a response_format without its type, and /detokenize without tokens', async () => {
    const format = await validationError(await postChat(sim.url, { messages, response_format: {} }));
    expect(format.message).toBe("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'response_format', 'type'), 'msg': 'Field required'}");
    const origin = sim.url.replace(/\/v1$/, '');
    const detokenize = await fetch(`${origin}/detokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await validationError(detokenize)).message).toBe("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'tokens'), 'msg': 'Field required'}");
  });

  it('keeps a wrong type given explicitly (null for a required field) as a type error, not `missing`', async () => {
    const error = await validationError(await postChat(sim.url, { messages: null }));
    expect(error.message).not.toContain("'missing'");
  });
});
