import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('npm run bench:parsers -- --only', () => {
  // It rewrites today's <date>-parsers.* (bench/parsers/README.md): a pattern that matched no case
  // replaced a day's results with an empty table, and one that was no regular expression crashed.
  it.each([
    ['zzz', /^parsers: --only "zzz" matches no case: .*hermes/],
    ['(', /^parsers: --only: Invalid regular expression/],
  ])('refuses %j in one line, status 2, and leaves today’s quick results as they were', async (only, message) => {
    const today = path.join(root, 'bench/results', `${new Date().toISOString().slice(0, 10)}-parsers-quick.md`);
    const before = existsSync(today) ? readFileSync(today, 'utf8') : null;
    const failed = await run(process.execPath, ['--import', 'tsx', 'bench/parsers/run.ts', '--quick', '--only', only], { cwd: root, timeout: 60_000 }).then(
      () => null,
      (err: { code: number | null; stderr: string }) => err,
    );
    expect(failed).not.toBeNull();
    expect(failed!.code).toBe(2);
    expect(failed!.stderr.trim()).toMatch(message);
    expect(failed!.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(today) ? readFileSync(today, 'utf8') : null).toBe(before);
  }, 90_000);
});
