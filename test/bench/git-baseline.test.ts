import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { baseline } from '../../bench/git-baseline.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const extracted = () => readdirSync(os.tmpdir()).filter((f) => f.startsWith('conveyor-baseline-'));

describe('--baseline with a ref that does not exist', () => {
  it('says so in one line and leaves no temporary directory behind', () => {
    const before = extracted();
    expect(() => baseline('no-such-ref-for-a-test', ['core'])).toThrow(/^--baseline no-such-ref-for-a-test: neither a folder nor a commit of this repository$/);
    expect(extracted()).toEqual(before);
  });

  // Was git's "fatal:" line, then a stack trace, status 1.
  it.each([
    ['bench/overhead/run.ts', /^overhead: --baseline no-such-ref-for-a-test: neither a folder nor a commit/],
    ['bench/parsers/run.ts', /^parsers: --baseline no-such-ref-for-a-test: neither a folder nor a commit/],
  ])('%s refuses it in one line, status 2, before measuring', async (script, message) => {
    const failed = await run(process.execPath, ['--import', 'tsx', script, '--quick', '--baseline', 'no-such-ref-for-a-test'], { cwd: root, timeout: 30_000 }).then(
      () => null,
      (err: { code: number | null; stderr: string; stdout: string }) => err,
    );
    expect(failed).not.toBeNull();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(message);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed!.stdout).toBe('');
  }, 45_000);
});
