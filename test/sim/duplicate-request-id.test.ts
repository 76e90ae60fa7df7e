import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, longReply, postChat, sseData, streamedText } from './sim-test-helpers.ts';

// Two requests in flight with the same X-Request-Id: vLLM since vllm-project/vllm#27987 serves
// both, each under the client's id (it keeps a suffixed one inside); v0.11 refused the second
// ("Request id chatcmpl-X already running."). The simulator follows the newer answer: sim/README.md.

const REPLY = longReply(40);
const headers = { 'content-type': 'application/json', 'x-request-id': 'dup-1' };

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('long', REPLY)] });
});
afterAll(() => sim.close());

describe('a request id used twice at once', () => {
  it('serves the second while the first is still streaming, both under the client id', async () => {
    const first = await postChat(sim.url, { messages: [{ role: 'user', content: 'go' }], stream: true }, { headers });
    const events = sseData(first);
    const head = (await events.next()).value as string;
    expect(JSON.parse(head).id).toBe('chatcmpl-dup-1');

    const second = await postChat(sim.url, { messages: [{ role: 'user', content: 'go' }], max_tokens: 3 }, { headers });
    expect(second.status).toBe(200);
    expect(((await second.json()) as { id: string }).id).toBe('chatcmpl-dup-1');

    const rest: string[] = [head];
    for await (const data of events) rest.push(data);
    expect(rest.at(-1)).toBe('[DONE]');
    expect(streamedText(rest)).toBe(REPLY);
  });
});
