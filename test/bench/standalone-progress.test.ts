import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// In a CI log (stderr a pipe) these scripts wrote their progress as `\roverhead: 3/10`, one line
// redrawn with carriage returns, which a log keeps as one long line; `npm run bench` writes plain
// lines there (progress.ts). And they wrote their files to bench/results whatever --out said
// (standalone-out.test.ts: they refused --out).
describe.each([
  { script: 'bench/overhead/run.ts', args: ['--parser-cpu', '--quick'], lines: ['parser-cpu: started', 'parser-cpu: 6/6'], files: /-parser-cpu-quick\.(json|md)$/ },
  {
    script: 'bench/plugin-start/run.ts',
    args: ['--runs', '1'],
    lines: ['plugin-start: started', 'plugin-start: 1/1', 'plugin-start cold calls: started', 'plugin-start cold calls: 1/1'],
    files: /-plugin-start-node\d+\.(json|md)$/,
  },
  { script: 'bench/plugin-start/reuse.ts', args: ['--runs', '1', '--calls', '2'], lines: ['process-reuse: started', 'process-reuse: 1/1'], files: /-process-reuse\.(json|md)$/ },
  // These three drew cli-progress bars, which write nothing at all without a terminal: a CI log
  // showed nothing for the whole run.
  { script: 'bench/sweep/run.ts', args: ['--quick', '--runs', '1'], lines: ['sweep: started'], end: /^sweep: (\d+)\/\1$/, files: /-sweep-quick\.(json|md|svg)$/, count: 3 },
  // Its whole names, "-quick" included: a smoke run named as a real one was quoted as one (standalone-quick-names.test.ts ran the script a second time to check it).
  { script: 'bench/load/run.ts', args: ['--quick'], lines: ['load: started'], end: /^load: (\d+)\/\1$/, files: /^\d{4}-\d\d-\d\d-load-quick\.(json|md|svg)$/, count: 3 },
  { script: 'bench/tool-results/run.ts', args: ['--runs', '1'], lines: ['tool-results: started', 'tool-results: 1/1'], files: /-tool-results\.(json|md)$/ },
] as Array<{ script: string; args: string[]; lines: string[]; end?: RegExp; files: RegExp; count?: number }>)('$script $args without a terminal', ({ script, args, lines, end, files, count = 2 }) => {
  const out = suiteTempDir('conveyor-bench-progress-');

  it('writes its progress as plain lines, in order, and its files into --out', async () => {
    const { stderr } = await run(process.execPath, ['--import', 'tsx', script, ...args, '--out', out], { cwd: root, timeout: 120_000 });
    expect(stderr).not.toMatch(/[\r\x1b]/);
    const written = stderr.trim().split('\n');
    expect(written.filter((l) => lines.includes(l))).toEqual(lines);
    expect(written[0]).toBe(lines[0]);
    // Its last line, where the total is known only as it runs.
    if (end) expect(written.filter((l) => l.startsWith(`${lines[0]!.split(':')[0]}:`)).at(-1)).toMatch(end);
    const names = readdirSync(out);
    expect(names).toHaveLength(count);
    for (const name of names) expect(name).toMatch(files);
  }, 150_000);
});
