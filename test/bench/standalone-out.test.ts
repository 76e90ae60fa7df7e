import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// The scripts run beside `npm run bench` (bench/README.md) that take --out. A folder they could not
// write was found only when the files were written: after the whole sweep (70 s), load run (130 s)
// or replicas run (45 s), which then ended in a stack trace and kept nothing.
// The overhead, forward, plugin-start, process-reuse and channel-deferral scripts refused --out as an unknown option
// (and wrote only to bench/results): the ones without --quick are run without it.
describe.each([
  ['bench/sweep/run.ts', ['--quick']],
  ['bench/load/run.ts', ['--quick']],
  ['bench/replicas/run.ts', ['--quick']],
  ['bench/overhead/run.ts', ['--quick']],
  ['bench/overhead/run.ts', ['--parser-cpu', '--quick']],
  ['bench/forward/run.ts', []],
  ['bench/plugin-start/run.ts', []],
  ['bench/plugin-start/reuse.ts', []],
  ['bench/runtimes/channel-deferral.ts', []],
  // These three took no --out folder until 2026-12-03 (adversarial.ts took a file).
  ['bench/parsers/run.ts', ['--quick']],
  ['bench/parsers/adversarial.ts', []],
  ['bench/overhead/continuous-usage-cost.ts', []],
])('%s %s --out', (script, args) => {
  it('refuses a folder it cannot write in one line, status 2, before measuring anything', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', script, ...args, '--out', '/dev/null/results'], { cwd: root, timeout: 20_000 }).then(
      () => null,
      (err: { code: number | null; killed?: boolean; stderr: string; stdout: string }) => err,
    );
    expect(failed, 'it ran to the end').not.toBeNull();
    expect(failed!.killed, 'it started measuring').toBeFalsy();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(/^[\w-]+: --out \/dev\/null\/results: ENOTDIR/);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed!.stdout).toBe('');
  }, 30_000);

  // Node 20's recursive mkdirSync never returns for a path under /proc: the script hung at 100 % CPU.
  // And /proc itself passes access(W_OK) as root, though nothing can be created in it.
  it.each(['/proc/conveyor-out-test', '/proc'])('refuses %s at once, in one line, status 2', async (out) => {
    const failed = await run(process.execPath, ['--import', 'tsx', script, ...args, '--out', out], { cwd: root, timeout: 60_000 }).then(
      () => null,
      (err: { code: number | null; killed?: boolean; stderr: string; stdout: string }) => err,
    );
    expect(failed, 'it ran to the end').not.toBeNull();
    expect(failed!.killed, 'it hung, or started measuring').toBeFalsy();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(new RegExp(`^[\\w-]+: --out ${out}: E[A-Z]+: `));
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed!.stdout).toBe('');
  }, 90_000);
});
