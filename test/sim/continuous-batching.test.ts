import { afterEach, describe, expect, it } from 'vitest';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { loadTimingProfile } from '../../sim/timing-profile.ts';
import { allSseData, fixedReplyScenario, longReply, postChat, sseData, streamedText, waitForCounters } from './sim-test-helpers.ts';

const LONG = longReply(60, 'long');
const SHORT = 'short and sweet';
const scenarios = [
  { name: 'long', rules: [{ when: { lastUser: 'long' }, reply: LONG }] },
  fixedReplyScenario('short', SHORT),
];
const ask = (what: 'long' | 'short') => ({ messages: [{ role: 'user', content: `give me the ${what} one` }], stream: true });

let sim: SimHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('continuous batching', () => {
  it('runs two overlapping requests in shared steps (batch occupancy 2)', async () => {
    sim = await startSim({ profile: 'fast-test', scenarios });
    const [a, b] = await Promise.all([postChat(sim.url, ask('long')), postChat(sim.url, ask('long'))]);
    const [textA, textB] = await Promise.all([allSseData(a), allSseData(b)]).then((all) => all.map(streamedText));
    expect(textA).toBe(LONG);
    expect(textB).toBe(LONG);

    const c = sim.counters();
    const perRequest = encodeText(LONG).length + 1;
    expect(c.tokensGenerated).toBe(2 * perRequest);
    expect(c.maxBatchOccupancy).toBe(2);
    // Shared steps: far fewer steps than tokens.
    expect(c.steps).toBeLessThan(c.tokensGenerated);
    expect(c.meanBatchOccupancy).toBeGreaterThan(1);
    expect(c).toMatchObject({ requestsFinished: 2, running: 0, waiting: 0, abortedSequences: 0 });
  });

  it('lets a late request join mid-stream and finish while the first is still decoding', async () => {
    sim = await startSim({ profile: 'fast-test', scenarios });
    const log: string[] = [];
    const first = await postChat(sim.url, ask('long'));
    const firstDone = (async () => {
      let seen = 0;
      let late: Promise<void> | undefined;
      for await (const data of sseData(first)) {
        log.push(data === '[DONE]' ? 'A:done' : 'A');
        seen += 1;
        if (seen === 5) {
          late = (async () => {
            const second = await postChat(sim!.url, ask('short'));
            for await (const d of sseData(second)) log.push(d === '[DONE]' ? 'B:done' : 'B');
          })();
        }
      }
      await late;
    })();
    await firstDone;

    const firstB = log.indexOf('B');
    const bDone = log.indexOf('B:done');
    const aDone = log.indexOf('A:done');
    expect(firstB).toBeGreaterThan(4);
    // B starts and finishes between A's chunks: it joined A's running batch.
    expect(log.slice(firstB, bDone).includes('A')).toBe(true);
    expect(bDone).toBeLessThan(aDone);
    expect(sim.counters()).toMatchObject({ maxBatchOccupancy: 2, requestsFinished: 2, running: 0 });
  });

  it('queues requests beyond maxNumSeqs and admits them when a sequence leaves', async () => {
    const profile = { ...loadTimingProfile('fast-test'), maxNumSeqs: 2 };
    sim = await startSim({ profile, scenarios });
    const longs = [postChat(sim.url, ask('long')), postChat(sim.url, ask('long'))];
    await waitForCounters(() => sim!.counters(), (c) => c.running === 2);
    const short = postChat(sim.url, ask('short'));
    await waitForCounters(() => sim!.counters(), (c) => c.waiting === 1);
    expect(sim.counters().running).toBe(2);

    const texts = await Promise.all([...longs, short].map(async (r) => streamedText(await allSseData(await r))));
    expect(texts).toEqual([LONG, LONG, SHORT]);
    expect(sim.counters()).toMatchObject({ maxBatchOccupancy: 2, maxWaiting: 1, requestsStarted: 3, requestsFinished: 3, waiting: 0 });
  });
});
