import { Command } from 'commander';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { runLoad } from './run-load.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';

const program = new Command()
  .name('bench-load')
  .description('Load benchmark: Poisson clients against the gateway and the batching simulator, partial execution on vs off interleaved.')
  .option('--quick', 'one rate for a few seconds, no warm-up (smoke test, under 20 s)')
  .option('--out <dir>', 'where result files go', 'bench/results');
usageErrorsExit2(program).parse();
const opts = program.opts<{ quick?: boolean; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, opts.out);

// Ctrl-C mid-run: the bar below hides the cursor; the terminal gets it back.
restoreTerminalOnSignals();
// A bar on a terminal, plain lines in a log (cli-progress wrote nothing at all there).
const bar = progressBar('load');
const result = await runLoad({ quick: opts.quick, onProgress: bar.update });
bar.stop();
console.log(`\n${result.markdown}`);
// `-quick` as the other parts' smoke runs have: a smoke run never takes a real run's name.
const files = writeResultFiles(opts.out, `load${opts.quick ? '-quick' : ''}`, { '.md': result.markdown, '.json': jsonText(result.json), '.svg': result.svg });
console.log(`results: ${files.join(', ')}`);
