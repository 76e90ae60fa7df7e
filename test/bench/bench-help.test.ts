import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('npm run bench -- --help', () => {
  // It said --quick "overrides --runs", and the two together are refused (status 2).
  it('says what --quick does with --runs as the command line treats it', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', '--help'], { cwd: root, timeout: 60_000 });
    const quick = stdout.slice(stdout.indexOf('--quick'), stdout.indexOf('--sequential-pairs')).replace(/\s+/g, ' ');
    expect(quick).toContain('not with --runs');
    expect(quick).not.toContain('overrides');
  }, 90_000);
});
