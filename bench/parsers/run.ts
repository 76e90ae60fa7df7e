/**
 * Parser throughput benchmark (issue 3): every format on a realistic ~3 KiB output, fed one
 * Mistral token per delta, side by side with re-parsing the call with partial-json on each delta.
 *
 *   npx tsx bench/parsers/run.ts [--quick] [--only REGEX] [--baseline GIT_REF|DIR] [--update]
 *
 * --baseline also times another version of the parsers in the same processes, for before/after:
 * a git ref (its parsers/ and core/ are extracted to a temporary directory) or a directory
 * holding such a copy. Writes bench/results/<date>-parsers[-quick].{md,json} and prints the table.
 * --update (with --only) re-measures only those rows and replaces them in today's results,
 * keeping the other rows and adding the command to the ones recorded: for re-running a row
 * whose batches another job on this shared box disturbed.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { baseline as checkout } from '../git-baseline.ts';
import { buildCases } from './cases.ts';
import { commitsLine, parsersRunProvenance } from './run-provenance.ts';
import type { CaseResult } from './measure-case.ts';
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
    .option('--update', "with --only: re-measure those rows and replace them in today's results")
    .parse();
  const { quick = false, update = false, only, baseline: baselineSpec } = program.opts<{ quick?: boolean; update?: boolean; only?: string; baseline?: string }>();
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
  let { command, commit } = made;

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
  const dir = path.join(here, '..', 'results');
  const base = path.join(dir, `${date}-parsers${quick ? '-quick' : ''}`);
  if (update && existsSync(`${base}.json`)) {
    const previous = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as { command: string; commit?: string; cases: CaseResult[] };
    const fresh = new Map(results.map((r) => [r.id, r]));
    const merged = previous.cases.map((r) => fresh.get(r.id) ?? r);
    for (const r of results) if (!previous.cases.some((p) => p.id === r.id)) merged.push(r);
    const order = cases.map((c) => c.id);
    merged.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    results.splice(0, results.length, ...merged);
    command = `${previous.command}\n${command}`;
    // Rows kept from the earlier run were measured on its commit.
    if (previous.commit !== undefined && previous.commit !== commit) commit = `${previous.commit}, rows re-run on ${commit}`;
  }
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}`;
  const md = [
    `# Parser throughput, ${date}`,
    '',
    '```sh',
    command,
    '```',
    '',
    `${machine}. ${commitsLine({ commit, baseline: made.baseline })} One token per delta (real Mistral tokenizer boundaries) unless the column says otherwise; ` +
      `each format in its own process; CPU time of the process; median of ${quick ? 5 : 15} interleaved batches ` +
      `after warm-up, with the slowest and fastest batch in brackets. MB = 10⁶ bytes of UTF-8. ` +
      `"core at ${STREAMS}×${TOKENS_PER_SECOND} tok/s" = ns/token × ${STREAMS * TOKENS_PER_SECOND} tokens/s ÷ 10⁹. ` +
      `partial-json: the call re-parsed from its start on every delta (see bench/parsers/README.md).`,
    '',
    markdownTable(results),
    '',
    ...summaryLines(results),
    '',
  ].join('\n');
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${base}.md`, md);
  writeFileSync(`${base}.json`, `${JSON.stringify({ command, commit, ...(made.baseline ? { baseline: made.baseline } : {}), date, machine, streams: STREAMS, tokensPerSecond: TOKENS_PER_SECOND, cases: results }, null, 2)}\n`);
  console.log(md);
  console.error(`wrote ${path.relative(process.cwd(), base)}.{md,json}`);
}

await main();
