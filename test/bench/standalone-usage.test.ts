import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

type Failure = { code: number | null; killed?: boolean; stderr: string; stdout: string };
const fails = (script: string, args: string[]): Promise<Failure | null> =>
  run(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, timeout: 60_000 }).then(
    () => null,
    (err: Failure) => err,
  );

// `npm run bench` answered a wrong command line with one `bench: ` line and status 2; the scripts
// run beside it (bench/README.md) let commander answer: `error: …`, status 1.
describe.each([
  ['bench/forward/run.ts', 'forward'],
  ['bench/load/run.ts', 'bench-load'],
  ['bench/overhead/run.ts', 'overhead'],
  ['bench/parsers/run.ts', 'parsers'],
  ['bench/plugin-start/run.ts', 'plugin-start'],
  ['bench/replicas/run.ts', 'bench-replicas'],
  ['bench/sweep/run.ts', 'sweep'],
])('%s', (script, name) => {
  it('refuses an unknown option in one line named after it, status 2, before measuring anything', async () => {
    const failed = await fails(script, ['--no-such-option']);
    expect(failed, 'it ran to the end').not.toBeNull();
    expect(failed!.killed, 'it started measuring').toBeFalsy();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toBe(`${name}: unknown option '--no-such-option'`);
    expect(failed!.stdout).toBe('');
  }, 90_000);

  it('prints its help with status 0', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script, '--help'], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(new RegExp(`^Usage: ${name} `));
  }, 90_000);
});

describe('a value an option refuses', () => {
  it('is one line and status 2 too', async () => {
    const failed = await fails('bench/sweep/run.ts', ['--runs', 'many']);
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(/^sweep: option '--runs <n>' argument 'many' is invalid\./);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
  }, 90_000);
});
