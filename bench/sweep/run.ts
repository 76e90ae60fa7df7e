import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { Command } from 'commander';
import { runSweep } from './run-sweep.ts';
import { SWEEP_PROFILE } from './sweep-scenarios.ts';

const program = new Command()
  .name('sweep')
  .description('The t/g sweep (Conveyor Figure 8): partial execution speedup against tool time / decode time, measured vs predicted.')
  .option('--quick', 'three points, two runs per mode (smoke test, ~15 s)')
  .option('--runs <n>', 'runs per mode per point (default 3, quick 2)', (v) => Number.parseInt(v, 10))
  .option('--out <dir>', 'where result files go', 'bench/results');
program.parse();
const opts = program.opts<{ quick?: boolean; runs?: number; out: string }>();

const command = `npx tsx bench/sweep/run.ts ${process.argv.slice(2).join(' ')}`.trim();
const bar = new cliProgress.SingleBar({ format: 't/g sweep |{bar}| {value}/{total} requests', hideCursor: true }, cliProgress.Presets.shades_classic);
bar.start(1, 0);
const result = await runSweep({
  quick: opts.quick,
  runs: opts.runs,
  command,
  onProgress: (done, total) => {
    bar.setTotal(total);
    bar.update(done);
  },
});
bar.stop();

console.log(`\n${result.markdown}`);
mkdirSync(opts.out, { recursive: true });
const stem = join(opts.out, `${new Date().toISOString().slice(0, 10)}-sweep${opts.quick ? '-quick' : ''}`);
const meta = { command, date: new Date().toISOString(), node: process.version, profile: SWEEP_PROFILE, upstream: 'embedded simulator' };
writeFileSync(`${stem}.json`, `${JSON.stringify({ meta, overheadMs: result.overheadMs, runs: result.runs, points: result.points }, null, 2)}\n`);
writeFileSync(`${stem}.md`, result.markdown);
writeFileSync(`${stem}.svg`, result.svg);
console.log(`results: ${stem}.md, ${stem}.json, ${stem}.svg`);
