import { Command, InvalidArgumentError, Option } from 'commander';
import { runExtraSections, EXTRA_SECTIONS, type ExtraSection, type SectionResult } from './extra-sections.ts';
import { markdownReport, writeBenchFiles, type BenchMeta } from './report.ts';
import type { WorkloadReport } from './run-ab.ts';
import { runWorkloads } from './run-workloads.ts';
import { spawnSim } from './sim-process.ts';
import { loadTimingProfile, shippedProfileNames } from '../sim/timing-profile.ts';
import { TOOL_CALL_PARSERS, type ToolCallParserName } from '../sim/sim-server.ts';
import { TOOL_PROFILES } from './tool-profiles/tool-profiles.ts';
import { codegen } from './workloads/codegen.ts';
import { calculator, database, planning, search, validation } from './workloads/paper-workloads.ts';
import type { Workload } from './workloads/workload.ts';

const WORKLOADS: Record<string, Workload> = { codegen, search, planning, validation, database, calculator };
const GROUPS: Record<string, string[]> = { workloads: Object.keys(WORKLOADS), all: [...Object.keys(WORKLOADS), ...EXTRA_SECTIONS] };

const program = new Command()
  .name('bench')
  .description('Latency benchmark: the real gateway over loopback, partial execution on vs off, side by side in one run.')
  .argument('[names...]', `what to run: ${[...Object.keys(WORKLOADS), ...EXTRA_SECTIONS].join(', ')}, or the groups workloads, all`, ['all'])
  .option('--runs <n>', 'measured runs per mode (on and off) per workload', positiveInt, 10)
  .option('--profile <name>', `simulator decode profile: ${shippedProfileNames().join(', ')} (sim/profiles), or a JSON file`, 'mistral-7b-rtx3090')
  .option('--tool-profile <name>', `tool timings: ${Object.keys(TOOL_PROFILES).join(', ')} (bench/tool-profiles)`, 'paper')
  .option('--upstream <url>', 'a real OpenAI-compatible server instead of the simulator (its model must call the tools); comma-separated: replicas of one model')
  .option('--model <name>', 'model name for a real upstream')
  .addOption(new Option('--sim-tool-call-parser <name>', "the simulator parses tool calls itself, as vLLM with --enable-auto-tool-choice --tool-call-parser: calls reach the gateway as delta.tool_calls").choices(TOOL_CALL_PARSERS))
  .option('--quick', 'two runs per mode, no warm-up, quick variants of the other sections (smoke test)')
  .option('--sequential-pairs', 'send each on/off pair one after the other instead of at the same moment')
  .option('--serial-workloads', 'run the workloads one after the other instead of all at once')
  .option('--cold-imports', 'no pre-imports in the Python fork server: each script pays for its imports')
  .option('--out <dir>', 'where result files go', 'bench/results')
  .option('--name <name>', 'result file name (default: the names run, or "all")');

program.parse();
const opts = program.opts<{
  runs: number; profile: string; toolProfile: string; upstream?: string; model?: string; quick?: boolean; simToolCallParser?: ToolCallParserName;
  sequentialPairs?: boolean; serialWorkloads?: boolean; coldImports?: boolean; out: string; name?: string;
}>();
const asked = [...new Set((program.processedArgs[0] as string[]).flatMap((n) => GROUPS[n] ?? [n]))];
for (const n of asked) if (!WORKLOADS[n] && !EXTRA_SECTIONS.includes(n as ExtraSection)) fail(`unknown name "${n}"`);
const workloads = asked.filter((n) => WORKLOADS[n]).map((n) => WORKLOADS[n]!);
const toolProfile = TOOL_PROFILES[opts.toolProfile] ?? fail(`unknown tool profile "${opts.toolProfile}"`);
// Checked here, before any server starts, so a typo reads as one line rather than a child's exit.
if (!opts.upstream) {
  try {
    loadTimingProfile(opts.profile);
  } catch (err) {
    fail((err as Error).message);
  }
}
const started = performance.now();
const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();

let reports: WorkloadReport[] = [];
let meta: BenchMeta | undefined;
if (workloads.length) {
  const sim = opts.upstream ? undefined : await spawnSim(opts.profile, { toolCallParser: opts.simToolCallParser });
  try {
    const run = await runWorkloads({
      workloads,
      upstreamUrl: opts.upstream ?? sim!.url,
      model: opts.model,
      toolProfile,
      runs: opts.quick ? 2 : opts.runs,
      warmup: opts.quick ? 0 : 1,
      sequentialPairs: Boolean(opts.sequentialPairs),
      serialWorkloads: Boolean(opts.serialWorkloads),
      coldImports: Boolean(opts.coldImports),
    });
    reports = run.reports;
    const simulator = `simulator (separate process${opts.simToolCallParser ? `, --tool-call-parser ${opts.simToolCallParser}` : ''})`;
    meta = { ...run.meta, command, profile: opts.upstream ? 'n/a (real upstream)' : opts.profile, upstream: opts.upstream ?? simulator };
  } finally {
    await sim?.close();
  }
}

const sections: SectionResult[] = await runExtraSections(EXTRA_SECTIONS.filter((s) => asked.includes(s)), { quick: Boolean(opts.quick) });
const group = Object.keys(GROUPS).find((g) => GROUPS[g]!.length === asked.length && GROUPS[g]!.every((n) => asked.includes(n)));
const name = (opts.name ?? group ?? asked.join('-')) + (opts.quick ? '-quick' : '');
const wallS = (performance.now() - started) / 1000;
const markdown = markdownReport({ meta, reports, sections, wallS });
console.log(`\n${markdown}`);
const files = writeBenchFiles(opts.out, name, { meta, reports, sections, wallS, markdown });
console.log(`results: ${files.join(', ')}`);

function positiveInt(value: string): number {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}
