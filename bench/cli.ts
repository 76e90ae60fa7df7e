import { constants } from 'node:os';
import { Command, Option } from 'commander';
import { wholeNumber } from '../gateway/commands/number-options.ts';
import { runExtraSections, EXTRA_SECTIONS, type ExtraSection, type SectionResult } from './extra-sections.ts';
import { restoreTerminal } from './progress.ts';
import { markdownReport, writeBenchFiles, type BenchMeta } from './report.ts';
import { checkOutDir } from './result-files.ts';
import { usageErrorsExit2 } from './usage-errors.ts';
import type { WorkloadReport } from './run-ab.ts';
import { runWorkloads } from './run-workloads.ts';
import { provenance } from './provenance.ts';
import { spawnSim } from './sim-process.ts';
import { loadTimingProfile, shippedProfileNames } from '../sim/timing-profile.ts';
import { parseUpstreamUrl, UpstreamUrlSchema } from '../llm-client/upstream-url.ts';
import { preflightUpstream } from './upstream-preflight.ts';
import { TOOL_CALL_PARSERS, type ToolCallParserName } from '../sim/sim-server.ts';
import { TOOL_PROFILES } from './tool-profiles/tool-profiles.ts';
import { codegen } from './workloads/codegen.ts';
import { calculator, database, planning, search, validation } from './workloads/paper-workloads.ts';
import type { Workload } from './workloads/workload.ts';
import { commandLine } from './command-line.ts';

const WORKLOADS: Record<string, Workload> = { codegen, search, planning, validation, database, calculator };
/** More runs than this is a typo, not a benchmark (20 runs already take minutes per workload). */
const MAX_RUNS = 1000;
const GROUPS: Record<string, string[]> = { workloads: Object.keys(WORKLOADS), all: [...Object.keys(WORKLOADS), ...EXTRA_SECTIONS] };

const program = new Command()
  .name('bench')
  .description('Latency benchmark: the real gateway over loopback, partial execution on vs off, side by side in one run.')
  .argument('[names...]', `what to run: ${[...Object.keys(WORKLOADS), ...EXTRA_SECTIONS].join(', ')}, or the groups workloads, all`, ['all'])
  .option('--runs <n>', 'workloads: measured runs per mode (on and off) per workload', wholeNumber(1, MAX_RUNS), 10)
  .option('--profile <name>', `workloads: simulator decode profile: ${shippedProfileNames().join(', ')} (sim/profiles), or a JSON file`, 'mistral-7b-rtx3090')
  .option('--tool-profile <name>', `workloads: tool timings: ${Object.keys(TOOL_PROFILES).join(', ')} (bench/tool-profiles)`, 'paper')
  .option('--upstream <url>', 'workloads: a real OpenAI-compatible server instead of the simulator (its model must call the tools); comma-separated: replicas of one model')
  .option('--model <name>', 'workloads: model name for the real upstream (with --upstream)')
  .addOption(
    new Option('--sim-tool-call-parser <name>', 'workloads: the simulator parses tool calls itself, as vLLM with --enable-auto-tool-choice --tool-call-parser: calls reach the gateway as delta.tool_calls').choices(
      TOOL_CALL_PARSERS,
    ),
  )
  .option('--quick', 'smoke test: two runs per mode and no warm-up (so not with --runs), quick variants of the other sections')
  .option('--sequential-pairs', 'workloads: send each on/off pair one after the other instead of at the same moment')
  .option('--serial-workloads', 'workloads: run them one after the other instead of all at once')
  .option('--cold-imports', 'workloads: no pre-imports in the Python fork server: each script pays for its imports')
  .option('--out <dir>', 'where result files go', 'bench/results')
  .option('--name <name>', 'result file name (default: the names run, or "all")')
  .addHelpText('after', '\nsweep, load, overhead and parser-cpu run fixed set-ups of their own (bench/README.md): the workloads: options do not apply to them.');
// Commander's own refusals (an unknown option, a value it rejects) read as this CLI's: one
// line, `bench: `, status 2, as fail() answers what it checks itself.
usageErrorsExit2(program).parse();
const opts = program.opts<{
  runs: number; profile: string; toolProfile: string; upstream?: string; model?: string; quick?: boolean; simToolCallParser?: ToolCallParserName;
  sequentialPairs?: boolean; serialWorkloads?: boolean; coldImports?: boolean; out: string; name?: string;
}>();
// In the order they run (and the file name lists them), whatever order they were named in.
const named = new Set((program.processedArgs[0] as string[]).flatMap((n) => GROUPS[n] ?? [n]));
const asked = [...GROUPS.all!.filter((n) => named.has(n)), ...[...named].filter((n) => !GROUPS.all!.includes(n))];
for (const n of asked) {
  if (!WORKLOADS[n] && !EXTRA_SECTIONS.includes(n as ExtraSection)) fail(`unknown name "${n}": choose from ${[...Object.keys(WORKLOADS), ...EXTRA_SECTIONS, ...Object.keys(GROUPS)].join(', ')}`);
}
const workloads = asked.filter((n) => WORKLOADS[n]).map((n) => WORKLOADS[n]!);
// Options that only the workloads read are refused where no workload runs, rather than ignored.
const WORKLOAD_OPTIONS = ['runs', 'profile', 'toolProfile', 'upstream', 'model', 'simToolCallParser', 'sequentialPairs', 'serialWorkloads', 'coldImports'] as const;
const givenOptions = WORKLOAD_OPTIONS.filter((key) => program.getOptionValueSource(key) === 'cli');
if (workloads.length === 0 && givenOptions.length) {
  fail(`${givenOptions.map(flagOf).join(', ')} only set(s) up the workloads, and none is named: ${asked.join(', ')} run(s) a fixed set-up of its own (bench/README.md)`);
}
// The name becomes part of a file name in --out: checked now, not when the files are written after minutes of measuring.
if (opts.name !== undefined && !/^[\w.+=@-]+$/.test(opts.name)) {
  fail(`--name ${JSON.stringify(opts.name)}: a result file name, without a folder (use --out for that): letters, digits and . _ - + = @`);
}
if (opts.quick && program.getOptionValueSource('runs') === 'cli') fail('--quick runs each workload twice per mode: give --runs or --quick, not both');
// Set-ups of tools that only some workloads call: given where none of those runs, the run was the
// same as without them, while the report's command line showed them.
const workloadNames = workloads.map((w) => w.name).join(', ');
const usedBy = (part: 'python' | 'search') => Object.values(WORKLOADS).filter((w) => w.uses?.includes(part)).map((w) => w.name);
if (opts.coldImports && !workloads.some((w) => w.uses?.includes('python'))) {
  fail(`--cold-imports sets up the Python tool, and none of ${workloadNames} runs Python (${usedBy('python').join(', ')} does)`);
}
if (program.getOptionValueSource('toolProfile') === 'cli' && !workloads.some((w) => w.uses?.length)) {
  fail(`--tool-profile times the Python and search tools, and none of ${workloadNames} uses them (${[...new Set([...usedBy('python'), ...usedBy('search')])].join(', ')} do)`);
}
if (opts.model && !opts.upstream) fail('--model names the model of a real upstream: give --upstream too (the simulator serves its own)');
if (opts.upstream && program.getOptionValueSource('profile') === 'cli') {
  fail('--profile sets the simulator\'s decode timing: with --upstream, the real server decodes at its own speed (the report would say n/a)');
}
if (opts.simToolCallParser && opts.upstream) fail('--sim-tool-call-parser sets up the simulator: with --upstream, the real server parses (or not) as it was started');
const toolProfile = TOOL_PROFILES[opts.toolProfile] ?? fail(`unknown tool profile "${opts.toolProfile}": choose from ${Object.keys(TOOL_PROFILES).join(', ')}`);
// Checked here, before any server starts, so a typo reads as one line rather than a child's exit.
if (!opts.upstream) {
  try {
    loadTimingProfile(opts.profile);
  } catch (err) {
    // The message names the shipped profiles already.
    fail((err as Error).message);
  }
}
// A malformed --upstream, or a replica listed twice, failed only once the gateways started, as
// the workloads' failure (exit 1).
const replicas = new Set<string>();
for (const url of opts.upstream?.split(',') ?? []) {
  try {
    parseUpstreamUrl(url);
  } catch (err) {
    fail(`--upstream: ${(err as Error).message}`);
  }
  // The gateway's own rule (its config refuses the list): the same URL, trailing slashes aside.
  const replica = UpstreamUrlSchema.parse(url);
  if (replicas.has(replica)) fail(`--upstream: ${replica} is listed twice: each replica once`);
  replicas.add(replica);
}
// A wrong base URL, key or model answers every workload request with an error; asked once here.
let model: string | undefined;
if (opts.upstream && workloads.length) {
  try {
    const found = await preflightUpstream({ urls: opts.upstream.split(','), model: opts.model, apiKey: process.env.CONVEYOR_UPSTREAM_API_KEY || undefined });
    model = found.model;
    if (found.picked) console.error(`bench: no --model given: using '${model}', the first model ${opts.upstream.split(',')[0]} lists`);
  } catch (err) {
    fail((err as Error).message);
  }
}
// The results folder too, before minutes of measuring that it could not keep.
try {
  checkOutDir(opts.out);
} catch (err) {
  fail((err as Error).message);
}
const started = performance.now();
const command = commandLine('npm run bench --', process.argv.slice(2));
const group = Object.keys(GROUPS).find((g) => GROUPS[g]!.length === asked.length && GROUPS[g]!.every((n) => asked.includes(n)));
const name = (opts.name ?? group ?? asked.join('-')) + (opts.quick ? '-quick' : '');
const quick = Boolean(opts.quick);

let reports: WorkloadReport[] = [];
let meta: BenchMeta | undefined;
const sections: SectionResult[] = [];
const failures: Array<{ part: string; message: string }> = [];
let running = 'workloads';
// However the run ends (a signal's process.exit included), the terminal gets back the cursor and
// line wrapping that the progress bars turned off.
process.once('exit', () => restoreTerminal());
// `npm run bench … | head`: a reader that stops early is not the run's failure. The result files
// are written all the same (the summary on stdout is only a copy of the .md file).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
});
// Registered before any child starts, so it runs before child-reaper.ts's handler: a long run
// stopped with Ctrl-C keeps the parts that had finished. Synchronous, as a signal handler must be.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    // First: with wrapping still off, the summary's long lines were cut at the terminal's edge.
    restoreTerminal();
    console.error(`\nbench: ${signal} during ${running}`);
    if (reports.length || sections.length) report({ signal, during: running });
    else console.error('bench: nothing had finished, no result files written');
    process.exit(128 + constants.signals[signal]);
  });
}

if (workloads.length) {
  try {
    const sim = opts.upstream ? undefined : await spawnSim(opts.profile, { toolCallParser: opts.simToolCallParser });
    try {
      const run = await runWorkloads({
        workloads,
        upstreamUrl: opts.upstream ?? sim!.url,
        simulator: !opts.upstream,
        model,
        toolProfile,
        runs: opts.quick ? 2 : opts.runs,
        warmup: opts.quick ? 0 : 1,
        sequentialPairs: Boolean(opts.sequentialPairs),
        serialWorkloads: Boolean(opts.serialWorkloads),
        coldImports: Boolean(opts.coldImports),
      });
      const simulator = `simulator (separate process${opts.simToolCallParser ? `, --tool-call-parser ${opts.simToolCallParser}` : ''})`;
      const upstream = opts.upstream ? `${opts.upstream} (model ${model})` : simulator;
      meta = { ...run.meta, ...provenance(), command, profile: opts.upstream ? 'n/a (real upstream)' : opts.profile, upstream };
      reports = run.reports;
      failures.push(...run.failures);
    } finally {
      await sim?.close();
    }
  } catch (err) {
    failures.push({ part: 'workloads', message: err instanceof Error ? err.message : String(err) });
  }
  for (const r of reports) {
    if (r.failedCalls > 0) console.error(`bench: warning: ${r.workload}: ${r.failedCalls} tool call(s) failed; its times measure the failure (see the report)`);
  }
}

const extra = await runExtraSections(EXTRA_SECTIONS.filter((s) => asked.includes(s)), {
  quick,
  command,
  onStart: (section) => (running = section),
  onResult: (section) => sections.push(section),
});
failures.push(...extra.failures);
report();
for (const f of failures) console.error(`bench: ${f.part} failed: ${f.message}`);
if (failures.length) process.exitCode = 1;

/** Prints the summary and writes the result files of what has finished. */
function report(interrupted?: { signal: string; during: string }): void {
  const origin = { command, ...provenance() };
  const run = { origin, meta, reports, sections, wallS: (performance.now() - started) / 1000, quick, failures, ...(interrupted ? { interrupted } : {}) };
  const markdown = markdownReport(run);
  console.log(`\n${markdown}`);
  if (reports.length || sections.length) {
    const files = writeBenchFiles(opts.out, interrupted ? `${name}-interrupted` : name, { ...run, markdown });
    console.log(`results: ${files.join(', ')}`);
  }
}

function flagOf(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function fail(message: string): never {
  // One line, whatever the message (a profile file's schema errors come one per line).
  console.error(`bench: ${message.trim().replace(/\s*\n\s*/g, '; ')}`);
  process.exit(2);
}
