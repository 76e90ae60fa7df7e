import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { spawnSim, type SimProcess } from '../sim-process.ts';

/** The load benchmark's engine and its one scenario, both committed next to this file. */
export const LOAD_PROFILE = fileURLToPath(new URL('./load-profile.json', import.meta.url));
export const LOAD_SCENARIOS = fileURLToPath(new URL('./scenarios', import.meta.url));

/** The /sim/counters fields the load report reads (the sim sends more). */
export const simCountersSchema = z.looseObject({
  steps: z.number(),
  tokensGenerated: z.number(),
  requestsFinished: z.number(),
  running: z.number(),
  waiting: z.number(),
  maxBatchOccupancy: z.number(),
  meanBatchOccupancy: z.number(),
  busyMs: z.number(),
  scheduleSlips: z.number(),
});
export type LoadSimCounters = z.infer<typeof simCountersSchema>;

export interface LoadSim extends SimProcess {
  counters(): Promise<LoadSimCounters>;
}

/** The simulator in its own process with the load scenario, so its engine loop never waits behind the gateway and the load clients. */
export async function spawnLoadSim(profile = LOAD_PROFILE): Promise<LoadSim> {
  const sim = await spawnSim(profile, { scenarios: [LOAD_SCENARIOS] });
  const countersUrl = new URL('/sim/counters', sim.url);
  return { ...sim, counters: async () => simCountersSchema.parse(await (await fetch(countersUrl)).json()) };
}
