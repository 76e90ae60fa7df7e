import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startSim } from '../../sim/sim-server.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// In a child process whose stderr is a pipe, as in CI.
const script = `
import { runWorkloads } from './bench/run-workloads.ts';
import { TOOL_PROFILES } from './bench/tool-profiles/tool-profiles.ts';
import { calculator } from './bench/workloads/paper-workloads.ts';
await runWorkloads({ workloads: [calculator], upstreamUrl: process.argv[1], simulator: true, toolProfile: TOOL_PROFILES.local, runs: 1, warmup: 1, sequentialPairs: false, serialWorkloads: false, coldImports: false });
`;

// Without a terminal a workload wrote its first line only 10 s after it began (or at its end): a
// CI log of the warm-ups and the first slow runs said nothing at all, where every section's says
// `sweep: started` (progress.ts) at once.
describe('the workloads’ progress without a terminal', () => {
  it('says each workload started, then its runs, with no escape codes', async () => {
    const sim = await startSim({ profile: 'fast-test' });
    try {
      const { stderr } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, sim.url], { cwd: root, timeout: 90_000 });
      expect(stderr).not.toMatch(/[\r\x1b]/);
      const lines = stderr.split('\n').filter((l) => l.startsWith('calculator: '));
      expect(lines[0]).toBe('calculator: started');
      expect(lines.at(-1)).toMatch(/^calculator: 2\/2 runs, last (on|off): \d+ ms$/);
    } finally {
      await sim.close();
    }
  }, 120_000);
});
