import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

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

export interface LoadSim {
  /** OpenAI base URL, ending in /v1. */
  url: string;
  counters(): Promise<LoadSimCounters>;
  close(): Promise<void>;
}

/**
 * The simulator in its own process (like bench/sim-process.ts, whose spawnSim takes no scenario
 * folder), so its engine loop never waits behind the gateway and the load clients.
 */
export async function spawnLoadSim(profile = LOAD_PROFILE): Promise<LoadSim> {
  const cli = fileURLToPath(new URL('../../sim/cli.ts', import.meta.url));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', cli, '--port', '0', '--profile', profile, '--scenarios', LOAD_SCENARIOS],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`simulator exited with code ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(line.trim()));
  });
  const countersUrl = new URL('/sim/counters', url);
  return {
    url,
    counters: async () => simCountersSchema.parse(await (await fetch(countersUrl)).json()),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
