/**
 * Gateway overhead benchmarks (issue 5):
 *
 *   npx tsx bench/overhead/run.ts [--quick] [--concurrency 1,100,500] [--baseline GIT_REF|DIR] [--profile NAME|FILE] [--out DIR]
 *                                                                      → bench/results/<date>-overhead[-quick].{md,json}
 *
 * --profile runs the simulator on another timing profile (default bench/overhead/overhead-profile.json),
 * e.g. `mistral-7b-h100` for the token rate a real GPU gives at each concurrency.
 * --baseline also runs our gateway as of another commit (or from another checkout), as a fourth
 * target in the same rounds: before/after figures from one run.
 *   npx tsx bench/overhead/run.ts --parser-cpu [--quick] [--baseline GIT_REF|DIR] [--out DIR]
 *                                                                      → bench/results/<date>-parser-cpu[-quick].{md,json}
 * --baseline with --parser-cpu runs that commit's gateway on the same simulator, its rounds
 * interleaved with this tree's, and gives the ratio of their CPU per request.
 *
 * Prints the Markdown table at the end, the command under its title.
 */
import { Command } from 'commander';
import { wholeNumbers } from '../../gateway/commands/number-options.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { runParserCpu } from './parser-cpu.ts';
import { baseline as checkout } from '../git-baseline.ts';
import { runOverhead } from './run-overhead.ts';
import { loadTimingProfile } from '../../sim/timing-profile.ts';
import { commandLine } from '../command-line.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';

const program = new Command()
  .name('overhead')
  .description('Gateway overhead: no tools, streams direct, through our gateway and through Portkey; or --parser-cpu.')
  .option('--quick', 'short rounds (smoke test)')
  .option('--concurrency <levels>', 'streams in flight, comma-separated (default 1,100,500)', wholeNumbers(1))
  .option('--baseline <ref-or-dir>', 'also time our gateway as of this git ref (or checkout folder), in the same rounds (with --parser-cpu too)')
  .option('--profile <name-or-file>', 'simulator timing profile (default bench/overhead/overhead-profile.json), e.g. mistral-7b-h100')
  .option('--parser-cpu', 'instead: gateway CPU per request with and without parsing')
  .option('--out <dir>', 'where result files go', 'bench/results');
usageErrorsExit2(program).parse();
const opts = program.opts<{ quick?: boolean; concurrency?: number[]; baseline?: string; profile?: string; parserCpu?: boolean; out: string }>();
const { quick = false, concurrency, profile } = opts;
// --parser-cpu runs a fixed set-up of its own: these were ignored, while the report's command line showed them.
if (opts.parserCpu) {
  const ignored = (['concurrency', 'profile'] as const).filter((key) => opts[key] !== undefined);
  if (ignored.length) program.error(`overhead: --${ignored[0]} does not apply to --parser-cpu (a fixed set-up: bench/README.md)`, { exitCode: 2 });
}
if (profile !== undefined) {
  try {
    loadTimingProfile(profile);
  } catch (err) {
    program.error(`overhead: ${(err as Error).message}`, { exitCode: 2 });
  }
}
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, opts.out);
const baselineSpec = opts.baseline;
const command = commandLine('npx tsx bench/overhead/run.ts', process.argv.slice(2));
const name = opts.parserCpu ? 'parser-cpu' : 'overhead';

const started = performance.now();
let before: ReturnType<typeof checkout> | undefined;
try {
  before = baselineSpec === undefined ? undefined : checkout(baselineSpec);
} catch (err) {
  program.error(`overhead: ${(err as Error).message}`, { exitCode: 2 });
}
// Ctrl-C mid-run: the bar hides the cursor; the terminal gets it back.
restoreTerminalOnSignals();
// After the usage checks, whose refusal is the one line on stderr. A bar on a terminal, plain
// lines in a log (its `\r` redraws were one long line there).
const bar = progressBar(name);
const result = await (name === 'parser-cpu'
  ? runParserCpu({ quick, command, onProgress: bar.update, baseline: before })
  : runOverhead({ quick, concurrency, command, onProgress: bar.update, baseline: before, profile })
).finally(() => {
  bar.stop();
  before?.dispose();
});
process.stderr.write(`${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

// The report opens with its title, the command under it, as every other report does.
const markdown = result.markdown;
const files = writeResultFiles(opts.out, `${name}${quick ? '-quick' : ''}`, { '.md': markdown, '.json': jsonText({ command, ...(result.json as object) }) });
console.log(`\n${markdown}`);
console.log(`results: ${files.join(', ')}`);
