/**
 * When each tool result reaches a streaming client: the Search workload's three parallel searches
 * (one Mistral [TOOL_CALLS] list), timed from the request to each `tool_call.completed` event, the
 * end of round 1 and the end of the answer, as the client reads them.
 *
 *   npx tsx bench/tool-results/run.ts [--runs N] [--baseline GIT_REF|DIR] [--profile NAME|FILE]
 *
 * Targets, in interleaved rounds (A B C, B C A, …) against one simulator each: this code with
 * partial execution on, the same with it off (the sequential baseline), and with --baseline the
 * gateway as of another commit, partial execution on. Writes bench/results/<date>-tool-results.{md,json}.
 */
import { Command } from 'commander';
import { createParser } from 'eventsource-parser';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { loadTimingProfile } from '../../sim/timing-profile.ts';
import { baseline as checkout, type Baseline } from '../git-baseline.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';
import { toolResultsMarkdown, type Timing } from './tool-results-report.ts';
import { commandLine } from '../command-line.ts';

const program = new Command()
  .name('tool-results')
  .description('When each tool result of the Search workload reaches a streaming client, partial execution on and off, side by side with another commit.')
  .option('--runs <n>', 'timed requests per target, after one warm-up each', wholeNumber(1, 200), 10)
  .option('--baseline <ref-or-dir>', 'also time the gateway as of this git ref (or checkout folder)')
  .option('--profile <name-or-file>', "the simulator's timing profile", 'mistral-7b-rtx3090')
  .option('--out <dir>', 'where result files go', 'bench/results');
usageErrorsExit2(program).parse();
const opts = program.opts<{ runs: number; baseline?: string; profile: string; out: string }>();
// Before measuring: a bad --out or profile found only at the end loses the whole run.
checkOutOption(program, opts.out);
try {
  loadTimingProfile(opts.profile);
} catch (err) {
  program.error(`tool-results: ${(err as Error).message}`, { exitCode: 2 });
}

const PROMPT = 'Find hello world programs in Python, C++ and Java.';
const MODEL = 'mistral-7b-instruct-sim';

interface Target {
  label: string;
  url: string;
  partial: boolean;
  timings: Timing[];
}

async function timedRequest(target: Target): Promise<Timing> {
  const started = performance.now();
  const res = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, partial_execution: target.partial, messages: [{ role: 'user', content: PROMPT }] }),
  });
  if (!res.ok || !res.body) throw new Error(`${target.label}: HTTP ${res.status}: ${await res.text()}`);
  const timing: Timing = { results: [], roundEnd: Number.NaN, answerEnd: Number.NaN };
  const parser = createParser({
    onEvent: (event) => {
      const at = performance.now() - started;
      if (event.data === '[DONE]') return void (timing.answerEnd = at);
      const chunk = JSON.parse(event.data) as { conveyor?: { type: string; round?: number } };
      if (chunk.conveyor?.type === 'tool_call.completed') timing.results.push(at);
      else if (chunk.conveyor?.type === 'round.finished' && chunk.conveyor.round === 1) timing.roundEnd = at;
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(bytes, { stream: true }));
  if (timing.results.length !== 3) throw new Error(`${target.label}: ${timing.results.length} tool results, not the workload's 3`);
  return timing;
}

type StartConveyor = (options: Record<string, unknown>) => Promise<{ gateway: { url: string }; close(): Promise<void> }>;

async function gatewayOf(root: string): Promise<Awaited<ReturnType<StartConveyor>>> {
  const { startConveyor } = (await import(`${root}/gateway/start-conveyor.ts`)) as { startConveyor: StartConveyor };
  return startConveyor({ gateway: { port: 0 }, plugins: { python: false }, sim: { profile: opts.profile } });
}

const here = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
let before: Baseline | undefined;
try {
  before = opts.baseline === undefined ? undefined : checkout(opts.baseline);
} catch (err) {
  program.error(`tool-results: ${(err as Error).message}`, { exitCode: 2 });
}
// Ctrl-C mid-run: the bar below hides the cursor; the terminal gets it back.
restoreTerminalOnSignals();
const ours = await gatewayOf(here);
const theirs = before && (await gatewayOf(before.dir));
const targets: Target[] = [
  { label: 'this code, partial execution on', url: ours.gateway.url, partial: true, timings: [] },
  { label: 'this code, partial execution off', url: ours.gateway.url, partial: false, timings: [] },
  ...(theirs ? [{ label: `${before!.label}, partial execution on`, url: theirs.gateway.url, partial: true, timings: [] }] : []),
];
// A bar on a terminal, plain lines in a log (cli-progress wrote nothing at all there).
const bar = progressBar('tool-results');
bar.update(0, opts.runs);
try {
  for (const target of targets) await timedRequest(target); // warm-up: spares started, caches filled
  for (let run = 0; run < opts.runs; run++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(run + k) % targets.length]!;
      target.timings.push(await timedRequest(target));
    }
    bar.update(run + 1, opts.runs);
  }
} finally {
  await ours.close();
  await theirs?.close();
  before?.dispose();
  bar.stop();
}

const command = commandLine('npx tsx bench/tool-results/run.ts', process.argv.slice(2));
const markdown = toolResultsMarkdown({ command, date: new Date().toISOString(), profile: opts.profile, runs: opts.runs, targets });
const files = writeResultFiles(opts.out, 'tool-results', { '.md': markdown, '.json': jsonText({ command, profile: opts.profile, runs: opts.runs, targets: targets.map(({ label, partial, timings }) => ({ label, partial, timings })) }) });
console.log(`\n${markdown}`);
console.log(`results: ${files.join(', ')}`);
process.exit(0);
