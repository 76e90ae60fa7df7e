/**
 * What `reuseProcess` saves: calculator calls through a real, sandboxed process pool (the
 * gateway's defaults: one warm spare per plugin), with the plugin as it ships (its processes kept
 * between calls) and with a fresh process per call, in alternating rounds. Each round sends
 * `--calls` calls one after another, then as many in pairs (two at once, as the bench's on/off
 * pairs and parallel tool calls do): a pair finds one spare, so without reuse one of its calls
 * waits for Node to start.
 *
 *   npx tsx bench/plugin-start/reuse.ts [--runs N] [--calls N] [--out DIR]   → bench/results/<date>-process-reuse.{md,json}
 */
import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { Command } from 'commander';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';
import { summarize } from '../stats.ts';
import { processReuseMarkdown } from './reuse-report.ts';
import { commandLine } from '../command-line.ts';

// A wrong command line as every bench script answers it: one line named after it, status 2.
const program = usageErrorsExit2(new Command().name('process-reuse'))
  .description('Calculator calls through the process pool, with reuseProcess and with a fresh process per call.')
  .option('--runs <n>', 'alternating rounds per mode', wholeNumber(1, 100), 6)
  .option('--calls <n>', 'calls per round, sequential and then in pairs', wholeNumber(2, 1000), 20)
  .option('--out <dir>', 'where result files go', 'bench/results')
  .parse();
const { runs, calls, out } = program.opts<{ runs: number; calls: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, out);

const MODES = { reused: calculator, 'fresh per call': { ...calculator, reuseProcess: false } } as const;
type Mode = keyof typeof MODES;
const moduleUrl = new URL('../../plugins/calculator/calculator-plugin.ts', import.meta.url).href;
const samples = new Map<string, number[]>();
let sandbox = '';

async function timedCall(tool: ReturnType<typeof toolFromPlugin>, i: number): Promise<number> {
  const started = performance.now();
  const run = await runScriptedCall(tool, { args: { expression: `200*${700 + i}` }, pieces: [{ kind: 'field', path: ['expression'], value: `200*${700 + i}` }] });
  if (!run.result?.ok) throw new Error(`calculator failed: ${run.result?.content}`);
  return performance.now() - started;
}

async function round(mode: Mode): Promise<void> {
  // A pool per round: every round starts as a gateway does, with one warm spare.
  const pools = createRuntimePools({ process: { uidBase: 1_900_600_000 } });
  sandbox = (await pools.process.ready()).protections.mode;
  const tool = toolFromPlugin(MODES[mode], { moduleUrl, pools });
  tool.warm();
  try {
    await timedCall(tool, 0); // the spare's first call: waits for it to come up in both modes
    const sequential: number[] = [];
    for (let i = 0; i < calls; i++) sequential.push(await timedCall(tool, i));
    const pairs: number[] = [];
    for (let i = 0; i < calls; i += 2) pairs.push(...(await Promise.all([timedCall(tool, i), timedCall(tool, i + 1)])));
    samples.set(`${mode}\tsequential`, [...(samples.get(`${mode}\tsequential`) ?? []), ...sequential]);
    samples.set(`${mode}\tpairs`, [...(samples.get(`${mode}\tpairs`) ?? []), ...pairs]);
  } finally {
    await pools.close();
  }
}

const modes = Object.keys(MODES) as Mode[];
// A bar on a terminal, plain lines in a log (its `\r` redraws were one long line there).
restoreTerminalOnSignals();
const bar = progressBar('process-reuse');
for (let r = 0; r < runs; r++) {
  for (const mode of r % 2 === 0 ? modes : [...modes].reverse()) await round(mode);
  bar.update(r + 1, runs);
}
bar.stop();

const rows = [...samples].map(([key, ms]) => {
  const [mode, pattern] = key.split('\t') as [Mode, string];
  return { mode, pattern, ms: summarize(ms) };
});
const command = commandLine('npx tsx bench/plugin-start/reuse.ts', process.argv.slice(2));
const markdown = processReuseMarkdown({
  command,
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpusLine(),
  sandbox,
  runs,
  calls,
  modes: [modes[0]!, modes[1]!],
  rows,
});
const files = writeResultFiles(out, 'process-reuse', {
  '.md': markdown,
  '.json': jsonText({ command, node: process.version, cpu: os.cpus()[0]?.model.trim(), sandbox, runs, calls, rows }),
});
console.log(markdown);
console.log(`results: ${files.join(', ')}`);
