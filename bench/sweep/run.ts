import { Command } from 'commander';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { runSweep } from './run-sweep.ts';
import { SWEEP_PROFILE } from './sweep-scenarios.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';
import { commandLine } from '../command-line.ts';

const program = new Command()
  .name('sweep')
  .description('The t/g sweep (Conveyor Figure 8): partial execution speedup against tool time / decode time, measured vs predicted.')
  .option('--quick', 'three points, two runs per mode unless --runs says otherwise (smoke test, ~15 s)')
  // Given with --quick, --runs is what runs (the report's header says how many): said here, as
  // the two combine rather than conflict (three points, N runs each).
  .option('--runs <n>', 'runs per mode per point, default 3 (2 with --quick): --runs wins over --quick', wholeNumber(1, 50))
  .option('--out <dir>', 'where result files go', 'bench/results');
usageErrorsExit2(program).parse();
const opts = program.opts<{ quick?: boolean; runs?: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, opts.out);

const command = commandLine('npx tsx bench/sweep/run.ts', process.argv.slice(2));
// Ctrl-C mid-run: the bar below hides the cursor; the terminal gets it back.
restoreTerminalOnSignals();
// A bar on a terminal, plain lines in a log (cli-progress wrote nothing at all there).
const bar = progressBar('sweep');
const result = await runSweep({
  quick: opts.quick,
  runs: opts.runs,
  command,
  onProgress: bar.update,
});
bar.stop();

console.log(`\n${result.markdown}`);
const meta = { command, date: new Date().toISOString(), node: process.version, profile: SWEEP_PROFILE, upstream: 'embedded simulator' };
const files = writeResultFiles(opts.out, `sweep${opts.quick ? '-quick' : ''}`, {
  '.md': result.markdown,
  '.json': jsonText({ meta, overheadMs: result.overheadMs, runs: result.runs, points: result.points }),
  '.svg': result.svg,
});
console.log(`results: ${files.join(', ')}`);
