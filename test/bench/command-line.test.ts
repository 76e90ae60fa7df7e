import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { commandLine } from '../../bench/command-line.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('the command line a report prints', () => {
  // Joined with spaces, `--out "/tmp/a b"` was printed as `--out /tmp/a b`: pasted back into a
  // shell, two arguments, and the run refused (an unknown name "b") or wrote elsewhere.
  it('quotes each argument as a POSIX shell reads it back', () => {
    expect(commandLine('npm run bench --', ['codegen', '--runs', '20', '--out', '/tmp/a b'])).toBe("npm run bench -- codegen --runs 20 --out '/tmp/a b'");
    expect(commandLine('npx tsx bench/sweep/run.ts', [])).toBe('npx tsx bench/sweep/run.ts');
    expect(commandLine('x', ["it's", '', '$HOME', 'a,b', 'k=v', 'http://h:8000/v1?x=1&y=2'])).toBe(`x 'it'\\''s' '' '$HOME' a,b k=v 'http://h:8000/v1?x=1&y=2'`);
  });

  it('is one that runs again: npm run bench -- calculator --quick with an --out folder that has a space in it', async () => {
    const out = path.join(suiteTempDir('conveyor-bench-command-'), 'a b');
    await mkdir(out);
    await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'calculator', '--quick', '--profile', 'fast-test', '--out', out], { cwd: root, timeout: 120_000 });
    const files = await readdir(out);
    const md = await readFile(path.join(out, files.find((f) => f.endsWith('.md'))!), 'utf8');
    expect(md).toContain(`Command: \`npm run bench -- calculator --quick --profile fast-test --out '${out}'\``);
    const json = JSON.parse(await readFile(path.join(out, files.find((f) => f.endsWith('.json'))!), 'utf8'));
    expect(json.origin.command).toBe(`npm run bench -- calculator --quick --profile fast-test --out '${out}'`);
  }, 150_000);
});
