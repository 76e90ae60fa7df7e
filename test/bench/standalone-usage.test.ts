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
  ['bench/tool-results/run.ts', 'tool-results'],
  // It answered commander's way: `error: …`, status 1.
  ['bench/runtimes/channel-deferral.ts', 'channel-deferral'],
  // So did this one.
  ['bench/overhead/continuous-usage-cost.ts', 'continuous-usage-cost'],
  // And this one.
  ['bench/plugin-start/reuse.ts', 'process-reuse'],
  // This one read its options with parseArgs: an unknown one was a stack trace, status 1.
  ['bench/parsers/adversarial.ts', 'parsers-adversarial'],
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

describe('bench/overhead/run.ts refusing what it checks itself', () => {
  // Its own refusals began `run: `, not the script's name as every other bench script's do.
  it('names itself for a timing profile it cannot find', async () => {
    const failed = await fails('bench/overhead/run.ts', ['--profile', 'no-such-profile']);
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(/^overhead: timing profile "no-such-profile" not found/);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
  }, 90_000);

  // --parser-cpu measured its fixed set-up and ignored these, though the report's command line showed
  // them. (--baseline, refused too until eb5f3dd, now runs that commit's gateway beside this one.)
  it.each([
    [['--concurrency', '5'], '--concurrency'],
    [['--profile', 'mistral-7b-h100'], '--profile'],
  ])('refuses %j with --parser-cpu, status 2, before measuring', async (args, flag) => {
    const failed = await fails('bench/overhead/run.ts', ['--parser-cpu', '--quick', ...args]);
    expect(failed, 'it ran to the end').not.toBeNull();
    expect(failed!.killed, 'it started measuring').toBeFalsy();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(new RegExp(`^overhead: ${flag} .*--parser-cpu`));
    expect(failed!.stdout).toBe('');
  }, 90_000);
});

describe('bench/replicas/run.ts --help', () => {
  // Four options showed no default at all (each has one, and another with --quick).
  it('gives every sized option its default', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/replicas/run.ts', '--help'], { cwd: root, timeout: 60_000 });
    const help = stdout.replace(/\s+/g, ' ');
    for (const flag of ['--doc-tokens', '--conversations', '--passes', '--rate']) {
      expect(help).toMatch(new RegExp(`${flag} <n> [^-]*\\(default[: ]`));
    }
  }, 90_000);
});

describe('bench/replicas/run.ts --profile', () => {
  // A profile it could not find was found only once the first replica started: a stack trace from
  // sim-process.ts after "replicas: started", status 1.
  it('refuses a timing profile it cannot find in one line named after it, status 2, before starting anything', async () => {
    const failed = await fails('bench/replicas/run.ts', ['--quick', '--profile', 'no-such-profile']);
    expect(failed, 'it ran to the end').not.toBeNull();
    expect(failed!.killed, 'it started measuring').toBeFalsy();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(/^bench-replicas: timing profile "no-such-profile" not found/);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed!.stdout).toBe('');
  }, 90_000);
});

describe('bench/sweep/run.ts --help', () => {
  // `--quick --runs 5` measured five runs per mode, where --quick's help promised two: it said
  // neither that --runs wins nor that the two combine.
  it('says that --runs wins over --quick', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/sweep/run.ts', '--help'], { cwd: root, timeout: 60_000 });
    const help = stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--quick [^-]*unless --runs/);
    expect(help).toMatch(/--runs <n> runs per mode per point, default 3 \(2 with --quick\): --runs wins over --quick/);
  }, 90_000);
});
