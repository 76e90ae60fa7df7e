import { describe, expect, it } from 'vitest';
import { SimConfigError } from '../../core/errors.ts';
import { startSimThread } from '../../sim/sim-thread.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';

describe('the simulator on a worker thread (the embedded upstream)', () => {
  it('serves the OpenAI routes, counts what it did where the caller reads it, and ends its thread on close', async () => {
    const sim = await startSimThread({ profile: E2E_PROFILE });
    try {
      expect(sim.counters()).toMatchObject({ requestsReceived: 0, tokensGenerated: 0 });
      const res = await fetch(`${sim.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: SIM_MODEL, max_tokens: 3, ignore_eos: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect((await res.json()) as unknown).toMatchObject({ usage: { completion_tokens: 3 } });
      await eventually(() => sim.counters().tokensGenerated === 3 && sim.counters().requestsFinished === 1, 'the counters caught up');
    } finally {
      await sim.close();
    }
    await expect(fetch(`${sim.url}/models`)).rejects.toThrow();
    // Closed again (a second signal, a test's clean-up after a stop): the thread has ended, nothing waits.
    await sim.close();
  });

  it('refuses a profile it cannot load with the SimConfigError startSim gives', async () => {
    await expect(startSimThread({ profile: 'no-such-profile' })).rejects.toBeInstanceOf(SimConfigError);
  });
});
