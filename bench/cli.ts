import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import cliProgress from 'cli-progress';
import { startConveyor } from '../gateway/start-conveyor.ts';
import { markdownReport, writeResults, type BenchMeta } from './report.ts';
import { runAb, type WorkloadReport } from './run-ab.ts';
import { spawnSim } from './sim-process.ts';
import { codegen } from './workloads/codegen.ts';
import type { Workload } from './workloads/workload.ts';

const WORKLOADS: Record<string, Workload> = { codegen };

const program = new Command()
  .name('bench')
  .description('Latency benchmark: the real gateway over loopback, partial execution on vs off, side by side.')
  .argument('[workloads...]', `workloads to run: ${Object.keys(WORKLOADS).join(', ')} or all`, ['all'])
  .option('--runs <n>', 'measured runs per mode', (v) => Number.parseInt(v, 10), 10)
  .option('--profile <name>', 'simulator timing profile', 'mistral-7b-rtx3090')
  .option('--upstream <url>', 'a real OpenAI-compatible server instead of the simulator')
  .option('--model <name>', 'model name for a real upstream')
  .option('--quick', 'two runs per mode, no warm-up (smoke test)')
  .option('--cold-imports', 'no pre-imports in the Python fork server: each script pays for its imports, as in the paper')
  .option('--out <dir>', 'where result files go', 'bench/results')
  .option('--name <name>', 'result file name suffix (default: the workload names)');

program.parse();
const opts = program.opts<{ runs: number; profile: string; upstream?: string; model?: string; quick?: boolean; coldImports?: boolean; out: string; name?: string }>();
const names = program.processedArgs[0] as string[];
const selected = names.includes('all') ? Object.values(WORKLOADS) : names.map((n) => WORKLOADS[n] ?? fail(`unknown workload "${n}"`));
const runs = opts.quick ? 2 : opts.runs;

const sim = opts.upstream ? undefined : await spawnSim(opts.profile);
const conveyor = await startConveyor({
  gateway: { port: 0, upstream: { baseUrl: opts.upstream ?? sim!.url, model: opts.model } },
  sandbox: opts.coldImports ? { preImports: [] } : {},
});
try {
  const python = conveyor.sandbox.python;
  const env = { numpy: canImport(python, 'numpy, matplotlib') };
  const bar = new cliProgress.SingleBar({ format: '{workload} |{bar}| {value}/{total} runs | last {mode}: {last} ms', hideCursor: true }, cliProgress.Presets.shades_classic);
  const reports: WorkloadReport[] = [];
  for (const workload of selected) {
    bar.start(runs * 2, 0, { workload: workload.name, mode: '-', last: '-' });
    reports.push(
      await runAb({
        gatewayUrl: conveyor.gateway.url,
        workload,
        env,
        runs,
        warmup: opts.quick ? 0 : 1,
        onRun: (r) => bar.increment({ mode: r.mode, last: r.totalMs.toFixed(0) }),
      }),
    );
    bar.stop();
  }
  const meta: BenchMeta = {
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    node: process.version,
    profile: opts.upstream ? 'n/a (real upstream)' : opts.profile,
    upstream: opts.upstream ?? 'simulator (separate process)',
    python: `${python}${env.numpy ? ' with numpy+matplotlib' : ' (stdlib only)'}${opts.coldImports ? ', cold imports (no pre-imports)' : ', pre-imported in the fork server'}`,
    sandbox: conveyor.sandbox.protections(),
  };
  console.log(`\n${markdownReport(meta, reports)}`);
  const files = writeResults(opts.out, opts.name ?? selected.map((w) => w.name).join('-'), meta, reports);
  console.log(`results: ${files.md}, ${files.json}`);
} finally {
  await conveyor.close();
  await sim?.close();
}

function canImport(python: string, modules: string): boolean {
  try {
    execFileSync(python, ['-c', `import ${modules}`], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}
