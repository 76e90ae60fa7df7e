import { execFileSync } from 'node:child_process';
import { Command, InvalidArgumentError } from 'commander';
import { startConveyor, type ConveyorOptions } from '../gateway/start-conveyor.ts';
import { defaultSearchIndex } from '../plugins/builtin-tools.ts';
import { runExtraSections, EXTRA_SECTIONS, type ExtraSection, type SectionResult } from './extra-sections.ts';
import { workloadsChart } from './workloads-chart.ts';
import { markdownReport, writeBenchFiles, type BenchMeta } from './report.ts';
import { runAb, type WorkloadReport } from './run-ab.ts';
import { spawnSim } from './sim-process.ts';
import { progressBar } from './progress.ts';
import { startSearchApiServer, type SearchApiServer } from './tool-profiles/search-api-server.ts';
import { TOOL_PROFILES, type ToolProfile } from './tool-profiles/tool-profiles.ts';
import { withStartupLatency } from './tool-profiles/with-startup-latency.ts';
import { codegen } from './workloads/codegen.ts';
import { calculator, database, planning, search, validation } from './workloads/paper-workloads.ts';
import type { Workload } from './workloads/workload.ts';

const WORKLOADS: Record<string, Workload> = { codegen, search, planning, validation, database, calculator };
const GROUPS: Record<string, string[]> = { workloads: Object.keys(WORKLOADS), all: [...Object.keys(WORKLOADS), ...EXTRA_SECTIONS] };

const program = new Command()
  .name('bench')
  .description('Latency benchmark: the real gateway over loopback, partial execution on vs off, side by side in one run.')
  .argument('[names...]', `what to run: ${[...Object.keys(WORKLOADS), ...EXTRA_SECTIONS].join(', ')}, or the groups workloads, all`, ['all'])
  .option('--runs <n>', 'measured on/off pairs per workload', positiveInt, 10)
  .option('--profile <name>', 'simulator decode profile (sim/profiles)', 'mistral-7b-rtx3090')
  .option('--tool-profile <name>', `tool timings: ${Object.keys(TOOL_PROFILES).join(', ')} (bench/tool-profiles)`, 'paper')
  .option('--upstream <url>', 'a real OpenAI-compatible server instead of the simulator (workloads need its model to call the tools)')
  .option('--model <name>', 'model name for a real upstream')
  .option('--quick', 'two pairs per workload, no warm-up, quick variants of the other sections (smoke test)')
  .option('--sequential-pairs', 'send each on/off pair one after the other instead of at the same moment')
  .option('--cold-imports', 'no pre-imports in the Python fork server: each script pays for its imports')
  .option('--out <dir>', 'where result files go', 'bench/results')
  .option('--name <name>', 'result file name (default: the names run, or "all")');

program.parse();
const opts = program.opts<{
  runs: number; profile: string; toolProfile: string; upstream?: string; model?: string; quick?: boolean;
  sequentialPairs?: boolean; coldImports?: boolean; out: string; name?: string;
}>();
const asked = (program.processedArgs[0] as string[]).flatMap((n) => GROUPS[n] ?? [n]);
for (const n of asked) if (!WORKLOADS[n] && !EXTRA_SECTIONS.includes(n as ExtraSection)) fail(`unknown name "${n}"`);
const workloads = asked.filter((n) => WORKLOADS[n]).map((n) => WORKLOADS[n]!);
const extras = EXTRA_SECTIONS.filter((s) => asked.includes(s));
const toolProfile = TOOL_PROFILES[opts.toolProfile] ?? fail(`unknown tool profile "${opts.toolProfile}"`);
const runs = opts.quick ? 2 : opts.runs;
const started = performance.now();

const reports: WorkloadReport[] = [];
let meta: BenchMeta | undefined;
if (workloads.length) {
  const sim = opts.upstream ? undefined : await spawnSim(opts.profile);
  const searchApi = toolProfile.search ? await startSearchApiServer({ indexFile: await defaultSearchIndex(), ...toolProfile.search }) : undefined;
  const conveyor = await startConveyor(conveyorOptions(toolProfile, searchApi, sim?.url));
  try {
    const python = conveyor.sandbox.python;
    const env = { numpy: canImport(python, 'numpy, matplotlib') };
    for (const workload of workloads) {
      const bar = progressBar(workload.name, runs * 2);
      reports.push(
        await runAb({
          gatewayUrl: conveyor.gateway.url,
          workload,
          env,
          runs,
          warmup: opts.quick ? 0 : 1,
          concurrentPairs: !opts.sequentialPairs,
          onRun: (r) => bar.increment({ detail: `last ${r.mode}: ${r.totalMs.toFixed(0)} ms` }),
        }),
      );
      bar.stop();
    }
    meta = {
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      date: new Date().toISOString(),
      node: process.version,
      profile: opts.upstream ? 'n/a (real upstream)' : opts.profile,
      toolProfile,
      upstream: opts.upstream ?? 'simulator (separate process)',
      pairs: opts.sequentialPairs ? 'sequential (on, off alternating first)' : 'concurrent (each on/off pair sent at the same moment)',
      python: `${python}${env.numpy ? ' with numpy+matplotlib' : ' (stdlib only)'}${opts.coldImports ? ', cold imports' : ', pre-imported in the fork server'}`,
      search: searchApi ? `HTTP backend → search API stand-in (${toolProfile.search!.latencyMs} ms, ${toolProfile.search!.concurrency || 'unlimited'} at a time)` : 'in-process FTS5 index',
      sandbox: conveyor.sandbox.protections(),
    };
  } finally {
    await conveyor.close();
    await Promise.allSettled([sim?.close(), searchApi?.close()]);
  }
}

const sections: SectionResult[] = await runExtraSections(extras, { quick: Boolean(opts.quick) });
const name = opts.name ?? (asked.length === GROUPS['all']!.length ? 'all' : asked.join('-')) + (opts.quick ? '-quick' : '');
const wallS = (performance.now() - started) / 1000;
const markdown = markdownReport({ meta, reports, sections, wallS });
console.log(`\n${markdown}`);
const files = writeBenchFiles(opts.out, name, { meta, reports, sections, wallS, markdown, workloadsSvg: reports.length ? workloadsChart(reports) : undefined });
console.log(`results: ${files.join(', ')}`);

function conveyorOptions(profile: ToolProfile, searchApi: SearchApiServer | undefined, simUrl: string | undefined): ConveyorOptions {
  return {
    gateway: { port: 0, upstream: { baseUrl: opts.upstream ?? simUrl, model: opts.model } },
    sandbox: opts.coldImports ? { preImports: [] } : {},
    plugins: searchApi ? { search: { url: searchApi.urlTemplate } } : {},
    decorateTool: (tool) => (tool.name === 'python' ? withStartupLatency(tool, profile.python.startupMs) : tool),
  };
}

function canImport(python: string, modules: string): boolean {
  try {
    execFileSync(python, ['-c', `import ${modules}`], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function positiveInt(value: string): number {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}
