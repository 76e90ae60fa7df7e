import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario, longReply, postChat, sseData, streamedText, waitForCounters } from './sim-test-helpers.ts';

const LONG = longReply(80);

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('long', LONG)] });
});
afterAll(() => sim.close());

const body = { messages: [{ role: 'user', content: 'go' }], stream: true };

describe('client disconnect', () => {
  it('drops the sequence at the next step boundary and counts it as aborted', async () => {
    const before = sim.counters();
    const controller = new AbortController();
    const res = await postChat(sim.url, body, { signal: controller.signal });
    let chunks = 0;
    await expect(
      (async () => {
        for await (const _ of sseData(res)) {
          chunks += 1;
          if (chunks === 4) controller.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(chunks).toBe(4);

    const after = await waitForCounters(
      () => sim.counters(),
      (c) => c.abortedSequences === before.abortedSequences + 1 && c.running === 0,
    );
    expect(after.requestsFinished).toBe(before.requestsFinished);
    // It stopped decoding: far fewer tokens than the full reply.
    expect(after.tokensGenerated - before.tokensGenerated).toBeLessThan(40);
  });

  it('keeps serving the other requests of the batch', async () => {
    const before = sim.counters();
    const survivor = postChat(sim.url, body);
    const controller = new AbortController();
    const victim = await postChat(sim.url, body, { signal: controller.signal });
    await waitForCounters(() => sim.counters(), (c) => c.running === 2);
    controller.abort();
    await expect(allSseData(victim)).rejects.toThrow();

    expect(streamedText(await allSseData(await survivor))).toBe(LONG);
    const after = await waitForCounters(() => sim.counters(), (c) => c.running === 0);
    expect(after.abortedSequences).toBe(before.abortedSequences + 1);
    expect(after.requestsFinished).toBe(before.requestsFinished + 1);
  });

  it('aborts a non-streamed request whose client goes away', async () => {
    const before = sim.counters();
    const req = request(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(JSON.stringify({ messages: [{ role: 'user', content: 'go' }] }));
    await waitForCounters(() => sim.counters(), (c) => c.running === 1);
    req.destroy();
    const after = await waitForCounters(() => sim.counters(), (c) => c.running === 0);
    expect(after.abortedSequences).toBe(before.abortedSequences + 1);
  });
});
