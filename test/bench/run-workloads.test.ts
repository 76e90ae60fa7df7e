import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pairsLine } from '../../bench/run-workloads.ts';
import { calculator, database, search } from '../../bench/workloads/paper-workloads.ts';
import { startSim } from '../../sim/sim-server.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// In a child process: what is checked is that the process exits, not hanging on a search API
// stand-in left open by a stand whose gateway failed (startAll, tested alone, closes the stands
// that did start when another fails).
const script = `
import { runWorkloads } from './bench/run-workloads.ts';
import { TOOL_PROFILES } from './bench/tool-profiles/tool-profiles.ts';
import { calculator, search } from './bench/workloads/paper-workloads.ts';
const url = process.argv[1];
try {
  await runWorkloads({ workloads: [calculator, search], upstreamUrl: url, simulator: true, toolProfile: TOOL_PROFILES.paper, runs: 1, warmup: 0, sequentialPairs: false, serialWorkloads: false, coldImports: false });
  console.log('ran');
} catch (err) {
  console.error('failed: ' + err.message);
  process.exitCode = 1;
}
`;

describe('runWorkloads', () => {
  it('exits with the error when its stands cannot start (each closes its search API stand-in)', async () => {
    const sim = await startSim({ profile: 'fast-test' });
    try {
      // The CLI refuses a replica listed twice before this point; called directly, the gateways'
      // configuration refuses it as each stand starts: two stands, both refused after their search
      // API stand-ins (the paper profile has one) have started.
      const failed = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, `${sim.url},${sim.url}`], { cwd: root, timeout: 60_000 }).then(
        () => null,
        (err: { code: number | null; signal: string | null; stderr: string; killed: boolean }) => err,
      );
      expect(failed?.killed).toBe(false);
      expect(failed?.signal ?? null).toBeNull();
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(/^failed: invalid gateway configuration: .*a replica is listed twice/m);
    } finally {
      await sim.close();
    }
  }, 90_000);
});

describe("the report's pairs line", () => {
  it('names only the workloads that ran one pair member after the other, with why', () => {
    expect(pairsLine({ sequentialPairs: false, workloads: [calculator] })).toBe('each on/off pair sent at the same moment');
    expect(pairsLine({ sequentialPairs: false, workloads: [search, calculator, database] })).toBe(
      'each on/off pair sent at the same moment, except search (its search API), database (one warm spare process): sequential',
    );
    expect(pairsLine({ sequentialPairs: true, workloads: [calculator] })).toBe('sequential');
  });
});
