import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readProcessTable } from '../../sandbox/process-tree.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { waitForValue } from '../support/wait-for-value.ts';

const root = path.resolve(import.meta.dirname, '../..');

// `npm run bench` gives a terminal its cursor and line wrapping back when stopped (child-reaper.test.ts);
// the standalone scripts with a progress bar left the terminal without a cursor: the bar hides it,
// and Ctrl-C ended them before the bar's stop() could show it again.
describe.runIf(existsSync('/usr/bin/script'))('a standalone script with a progress bar, stopped with Ctrl-C on a terminal', () => {
  const out = suiteTempDir('conveyor-bench-standalone-tty-');
  it.each([
    ['bench/sweep/run.ts', /sweep +\|/],
    ['bench/load/run.ts', /load +\|/],
  ])('%s shows the cursor again and exits 130', async (script, bar) => {
    const command = `stty cols 200; exec ${process.execPath} --import tsx ${script} --quick --out ${out}`;
    const term = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] });
    let screen = '';
    term.stdout!.on('data', (b: Buffer) => (screen += b.toString()));
    const exited = new Promise<number | null>((resolve) => term.once('exit', (code) => resolve(code)));
    try {
      await waitForValue('the bar to draw', () => (bar.test(screen) ? true : undefined), 120_000);
      const bench = await waitForValue('the script process', () => [...readProcessTable().values()].find((p) => p.ppid === term.pid)?.pid, 10_000);
      process.kill(bench, 'SIGINT');
      expect(await exited).toBe(130);
      expect(screen.lastIndexOf('\x1b[?25h')).toBeGreaterThan(screen.lastIndexOf('\x1b[?25l'));
    } finally {
      if (term.exitCode === null) term.kill('SIGKILL');
    }
  }, 150_000);
});
