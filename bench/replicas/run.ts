import { Command, InvalidArgumentError } from 'commander';
import { loadTimingProfile } from '../../sim/timing-profile.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';
import { provenance } from '../provenance.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { replicasMarkdown } from './replicas-report.ts';
import { runReplicas } from './run-replicas.ts';
import { commandLine } from '../command-line.ts';

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

const program = new Command()
  .name('bench-replicas')
  .description('Two simulator replicas behind the gateway: conversations kept on their replica vs spread round by round, side by side.')
  .option('--quick', 'a few short conversations (smoke test)')
  .option('--profile <name>', 'timing profile of both replicas', 'mistral-7b-h100')
  .option('--doc-tokens <n>', 'approximate tokens of the document each conversation carries (default 2000, quick 600)', positiveInt)
  .option('--conversations <n>', 'conversations per pass (default 24, quick 4)', positiveInt)
  .option('--passes <n>', 'passes, alternating kept and spread (default 6, quick 2)', positiveInt)
  .option('--rate <n>', 'new conversations per second, Poisson arrivals (default 6, quick 4)', (v) => {
    const n = Number(v);
    if (!(n > 0)) throw new InvalidArgumentError('expected a rate > 0');
    return n;
  })
  .option('--out <dir>', 'where result files go', 'bench/results');
usageErrorsExit2(program).parse();
const opts = program.opts<{ quick?: boolean; profile: string; docTokens?: number; conversations?: number; passes?: number; rate?: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, opts.out);
// Checked before any replica starts: a wrong name was a replica's exit, a stack trace after "replicas: started".
try {
  loadTimingProfile(opts.profile);
} catch (err) {
  program.error(`bench-replicas: ${(err as Error).message}`, { exitCode: 2 });
}

// Ctrl-C mid-run: a terminal's bar hides the cursor; the terminal gets it back.
restoreTerminalOnSignals();
const bar = progressBar('replicas');
const result = await runReplicas({ ...opts, ratePerS: opts.rate, onProgress: (done, total) => bar.update(done, total) });
bar.stop();
const command = commandLine('npx tsx bench/replicas/run.ts', process.argv.slice(2));
// When, on what and from which code: the figures alone could not be traced to a machine or commit.
const origin = { command, date: new Date().toISOString(), node: process.version, ...provenance() };
// The title first, the command and the origin under it, as the other reports (they came after the report).
const markdown = replicasMarkdown(result.meta, result.modes, result.wallS, origin);
console.log(`\n${markdown}`);
// `-quick` as the other parts' smoke runs have: a smoke run never takes a real run's name.
const files = writeResultFiles(opts.out, `replicas${opts.quick ? '-quick' : ''}`, {
  '.md': markdown,
  '.json': jsonText({ ...origin, ...(result.json as object) }),
});
console.log(`results: ${files.join(', ')}`);
