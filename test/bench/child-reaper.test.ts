import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { descendantPids, readProcessTable } from '../../sandbox/process-tree.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { waitForValue } from '../support/wait-for-value.ts';

const root = path.resolve(import.meta.dirname, '../..');

function alive(pid: number): boolean {
  const state = readProcessTable().get(pid)?.state;
  return state !== undefined && state !== 'Z';
}

/** `npm run bench -- …args` as its own process, its stderr collected. */
function startBench(args: string[]): { bench: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const bench = spawn(process.execPath, ['--import', 'tsx', 'bench/cli.ts', ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  bench.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
  return { bench, stderr: () => stderr, exited };
}

describe('a benchmark stopped by a signal', () => {
  const out = suiteTempDir('conveyor-bench-reaper-');

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`takes its simulator and plugin processes with it (${signal})`, async () => {
      const { bench, stderr, exited } = startBench(['database', '--runs', '50', '--profile', 'fast-test', '--out', out]);
      try {
        // Running pairs: the simulator and the database plugin's process are up.
        await waitForValue('the first runs', () => (/database: \d+\/\d+ runs/.test(stderr()) ? true : undefined), 120_000);
        const children = descendantPids(bench.pid!);
        expect(children.length).toBeGreaterThanOrEqual(2);
        bench.kill(signal);
        expect(await exited).toBe(signal === 'SIGTERM' ? 143 : 130);
        await waitForValue('its children to end', () => (children.some(alive) ? undefined : true), 10_000);
      } finally {
        if (bench.exitCode === null) bench.kill('SIGKILL');
      }
    }, 180_000);
  }

  it('keeps the parts that had finished when stopped with Ctrl-C (SIGINT)', async () => {
    const kept = suiteTempDir('conveyor-bench-interrupted-');
    const { bench, stderr, exited } = startBench(['calculator', 'sweep', '--runs', '1', '--profile', 'fast-test', '--out', kept]);
    try {
      // The workload is done once the sweep's progress starts.
      await waitForValue('the sweep to start', () => (/^sweep: started$/m.test(stderr()) ? true : undefined), 120_000);
      bench.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr()).toContain('bench: SIGINT during sweep');
      const files = (await readdir(kept)).sort();
      expect(files.map((f) => f.replace(/^\d{4}-\d{2}-\d{2}-/, ''))).toEqual([
        'calculator-sweep-interrupted-timelines.svg',
        'calculator-sweep-interrupted.json',
        'calculator-sweep-interrupted.md',
        'calculator-sweep-interrupted.svg',
      ]);
      const json = JSON.parse(await readFile(path.join(kept, files.find((f) => f.endsWith('.json'))!), 'utf8'));
      expect(json).toMatchObject({ interrupted: { signal: 'SIGINT', during: 'sweep' }, sections: [] });
      expect(json.reports.map((r: { workload: string }) => r.workload)).toEqual(['calculator']);
      expect(await readFile(path.join(kept, files.find((f) => f.endsWith('.md'))!), 'utf8')).toContain('**Interrupted (SIGINT) during sweep');
    } finally {
      if (bench.exitCode === null) bench.kill('SIGKILL');
    }
  }, 180_000);

  // `script` (util-linux, in every Debian) gives the bench a terminal, so its bars draw in place.
  it.runIf(existsSync('/usr/bin/script'))('gives a terminal its cursor and line wrapping back when stopped with Ctrl-C (SIGINT)', async () => {
    const kept = suiteTempDir('conveyor-bench-tty-');
    const command = `stty cols 200; exec ${process.execPath} --import tsx bench/cli.ts database --runs 50 --profile fast-test --out ${kept}`;
    const term = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] });
    let screen = '';
    term.stdout!.on('data', (b: Buffer) => (screen += b.toString()));
    const exited = new Promise<number | null>((resolve) => term.once('exit', (code) => resolve(code)));
    try {
      await waitForValue('the bars to draw', () => (/database +\|/.test(screen) ? true : undefined), 120_000);
      // script's one child, the shell that exec'd Node (not by its comm: Node 24 names its main thread "MainThread").
      const bench = await waitForValue('the bench process', () => [...readProcessTable().values()].find((p) => p.ppid === term.pid)?.pid, 10_000);
      process.kill(bench, 'SIGINT');
      expect(await exited).toBe(130);
      expect(screen).toContain('bench: SIGINT during workloads');
      // The bars hid the cursor and turned wrapping off: the last word on each is "on" again.
      expect(screen.lastIndexOf('\x1b[?25h')).toBeGreaterThan(screen.lastIndexOf('\x1b[?25l'));
      expect(screen.lastIndexOf('\x1b[?7h')).toBeGreaterThan(screen.lastIndexOf('\x1b[?7l'));
    } finally {
      if (term.exitCode === null) term.kill('SIGKILL');
    }
  }, 180_000);
});
