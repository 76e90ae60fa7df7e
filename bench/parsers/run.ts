/**
 * Parser throughput benchmark (issue 3): every format on a realistic ~3 KiB output, fed one
 * Mistral token per delta, side by side with re-parsing the call with partial-json on each delta.
 *
 *   npx tsx bench/parsers/run.ts [--quick] [--only REGEX] [--baseline GIT_REF|DIR] [--update] [--out DIR]
 *     → bench/results/<date>-parsers[-quick].{md,json}
 *
 * --baseline also times another version of the parsers in the same processes, for before/after:
 * a git ref (its parsers/ and core/ are extracted to a temporary directory) or a directory
 * holding such a copy. Prints the table.
 * --update (with --only) re-measures only those rows and writes today's latest results in --out
 * again (as the next `-N`) with them replaced, keeping the other rows and adding the command to
 * the ones recorded: for re-running a row whose batches another job on this shared box disturbed.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { checkOutOption, jsonText, latestResultStem, writeResultFiles } from '../result-files.ts';
import { baseline as checkout } from '../git-baseline.ts';
import { buildCases } from './cases.ts';
import { commitsLine, parsersRunProvenance } from './run-provenance.ts';
import type { CaseResult } from './measure-case.ts';
import { mergeUpdate, type ParsersRows } from './update-merge.ts';
import { markdownTable, runStats, STREAMS, summaryLines, TOKENS_PER_SECOND } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

function measureCase(index: number, args: readonly string[]): Promise<CaseResult> {
  return new Promise((resolve, reject) => {
    // Inherits tsx's loader flags (process.execArgv), so the child runs TypeScript too.
    const child = fork(path.join(here, 'measure-case.ts'), [String(index), ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: CaseResult | undefined;
    child.on('message', (m) => (result = m as CaseResult));
    child.on('error', reject);
    child.on('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`case ${index} exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const program = usageErrorsExit2(new Command().name('parsers'))
    .description('Parser throughput: every format on a realistic output, one token per delta, beside re-parsing with partial-json.')
    .option('--quick', 'fewer batches (smoke test)')
    .option('--only <regex>', 'only the cases whose id matches')
    .option('--baseline <ref-or-dir>', 'also time the parsers as of this git ref (or a folder holding parsers/ and core/)')
    .option('--update', "with --only: re-measure those rows and write today's latest results again with them replaced")
    .option('--out <dir>', 'where result files go', 'bench/results')
    .parse();
  const { quick = false, update = false, only, baseline: baselineSpec, out } = program.opts<{ quick?: boolean; update?: boolean; only?: string; baseline?: string; out: string }>();
  const cases = buildCases();
  // Checked before anything runs: a pattern that matched nothing rewrote today's results as an
  // empty table, and one that is not a regular expression ended in a stack trace.
  let selected = cases;
  if (only !== undefined) {
    try {
      const pattern = new RegExp(only);
      selected = cases.filter((c) => pattern.test(c.id));
    } catch (err) {
      program.error(`parsers: --only: ${(err as Error).message}`, { exitCode: 2 });
    }
    if (selected.length === 0) program.error(`parsers: --only ${JSON.stringify(only)} matches no case: ${cases.map((c) => c.id).join(', ')}`, { exitCode: 2 });
  }
  // Before measuring: a bad --out found only when the files are written loses the whole run.
  checkOutOption(program, out);
  // Only parsers/ and core/: the part of the tree the children import from the baseline.
  let baseline: ReturnType<typeof checkout> | undefined;
  try {
    baseline = baselineSpec === undefined ? undefined : checkout(baselineSpec, ['parsers', 'core']);
  } catch (err) {
    program.error(`parsers: ${(err as Error).message}`, { exitCode: 2 });
  }
  const childArgs = [...(quick ? ['--quick'] : []), ...(baseline ? ['--baseline', baseline.dir] : [])];
  // Quoted as bench/command-line.ts quotes every report's command; this script's own quoting left a
  // quote inside an argument as it was, so `--only "it's"` was printed as a line no shell reads.
  const made = parsersRunProvenance(args, baseline);

  const results: CaseResult[] = [];
  try {
    for (const c of selected) {
      const result = await measureCase(cases.indexOf(c), childArgs);
      const s = runStats(result, 'conveyor')!;
      console.error(`${c.id.padEnd(22)} ${s.mbPerS.median.toFixed(1).padStart(6)} MB/s  ${s.nsPerToken.toFixed(0).padStart(4)} ns/token`);
      results.push(result);
    }
  } finally {
    baseline?.dispose();
  }

  const date = new Date().toISOString().slice(0, 10);
  const name = `parsers${quick ? '-quick' : ''}`;
  let rows: ParsersRows = { command: made.command, commit: made.commit, cases: results };
  const previous = update ? latestResultStem(out, name, '.json') : undefined;
  if (previous !== undefined) rows = mergeUpdate(JSON.parse(readFileSync(`${previous}.json`, 'utf8')) as ParsersRows, rows, cases.map((c) => c.id));
  else if (update) console.error(`parsers: --update: no ${date}-${name}.json in ${out}: these results hold only the rows run now`);
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}`;
  const md = [
    `# Parser throughput, ${date}`,
    '',
    '```sh',
    rows.command,
    '```',
    '',
    `${machine}. ${commitsLine({ ...rows, baseline: made.baseline })} One token per delta (real Mistral tokenizer boundaries) unless the column says otherwise; ` +
      `each format in its own process; CPU time of the process; median of ${quick ? 5 : 15} interleaved batches ` +
      `after warm-up, with the slowest and fastest batch in brackets. MB = 10⁶ bytes of UTF-8. ` +
      `"core at ${STREAMS}×${TOKENS_PER_SECOND} tok/s" = ns/token × ${STREAMS * TOKENS_PER_SECOND} tokens/s ÷ 10⁹. ` +
      `partial-json: the call re-parsed from its start on every delta (see bench/parsers/README.md).`,
    '',
    markdownTable(rows.cases),
    '',
    ...summaryLines(rows.cases),
    '',
  ].join('\n');
  // Through writeResultFiles, as every bench script: an --update writes the merged rows as the next
  // `-N` and leaves the results it read as they were (a README may cite them).
  const json = jsonText({ command: rows.command, commit: rows.commit, ...(rows.rowCommits ? { rowCommits: rows.rowCommits } : {}), ...(made.baseline ? { baseline: made.baseline } : {}), date, machine, streams: STREAMS, tokensPerSecond: TOKENS_PER_SECOND, cases: rows.cases });
  const files = writeResultFiles(out, name, { '.md': md, '.json': json });
  console.log(md);
  console.error(`wrote ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
}

await main();
