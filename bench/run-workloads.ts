import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import cliProgress from 'cli-progress';
import { startConveyor, type ConveyorHandle } from '../gateway/start-conveyor.ts';
import { defaultSearchIndex } from '../plugins/builtin-tools.ts';
import type { BenchMeta } from './report.ts';
import { figureMs, runAb, type RunRecord, type WorkloadReport } from './run-ab.ts';
import { startAll } from './start-all.ts';
import { startSearchApiServer, type SearchApiServer } from './tool-profiles/search-api-server.ts';
import type { ToolProfile } from './tool-profiles/tool-profiles.ts';
import { withStartupLatency } from './tool-profiles/with-startup-latency.ts';
import type { Workload } from './workloads/workload.ts';
import type { Provenance } from './provenance.ts';

export interface WorkloadsOptions {
  workloads: Workload[];
  /** One base URL, or several separated by commas: replicas of one model (the gateway balances them). */
  upstreamUrl: string;
  /** Whether upstreamUrl is the simulator (the requests name its scenarios only then). */
  simulator: boolean;
  model?: string;
  toolProfile: ToolProfile;
  runs: number;
  warmup: number;
  /** Every on/off pair one after the other (else at the same moment, unless the workload forbids it). */
  sequentialPairs: boolean;
  /** One workload after the other instead of all at once. */
  serialWorkloads: boolean;
  coldImports: boolean;
}

interface Stand {
  conveyor: ConveyorHandle;
  searchApi?: SearchApiServer;
}

/**
 * Runs the paper's workloads. Each gets its own gateway (and search API stand-in), so workloads
 * running at the same time never share a tool's queue; they share the one simulator, as requests
 * of different users share a serving engine.
 */
export async function runWorkloads(o: WorkloadsOptions): Promise<{
  reports: WorkloadReport[];
  /** Workloads that failed (a request the gateway or upstream refused, a tool stand that broke); the others' reports are kept. */
  failures: Array<{ part: string; message: string }>;
  meta: Omit<BenchMeta, 'command' | 'profile' | 'upstream' | keyof Provenance>;
}> {
  const coldImports = o.coldImports || o.toolProfile.python.coldImports;
  // One stand per workload; a malformed --upstream or a replica listed twice fails them all.
  const stands = await startAll(o.workloads.length, () => startStand(o, coldImports), closeStand);
  try {
    const sandbox = stands[0]!.conveyor.sandbox;
    // The stands enable the python tool (codegen needs it), so startConveyor has started its sandbox.
    if (!sandbox) throw new Error('the workloads need the python tool, and its sandbox did not start');
    const python = sandbox.python;
    const env = { numpy: await canImport(python, 'numpy, matplotlib'), simulator: o.simulator };
    // cli-progress's MultiBar renders a non-TTY stream wrongly (placeholders, totals): plain lines there.
    const tty = process.stderr.isTTY === true;
    const bars = tty ? new cliProgress.MultiBar({ format: '{workload} |{bar}| {value}/{total} runs {detail}', hideCursor: true, stream: process.stderr }, cliProgress.Presets.shades_classic) : undefined;
    const measure = (workload: Workload, stand: Stand, arrive: () => Promise<void>) => {
      let done = 0;
      // Without a terminal: a line as the workload starts (its first run line came 10 s later, after
      // the warm-up, so a log said nothing of it), then at most one every 10 s (a run of search or
      // codegen takes seconds, so every 10th run left CI silent for minutes), and its last.
      let lastLine = performance.now();
      if (!bars) process.stderr.write(`${workload.name}: started\n`);
      const bar = bars?.create(o.runs * 2, 0, { workload: workload.name.padEnd(11), detail: '' }) ?? {
        increment: (payload: { detail: string }) => {
          done++;
          if (performance.now() - lastLine < 10_000 && done !== o.runs * 2) return;
          lastLine = performance.now();
          process.stderr.write(`${workload.name}: ${done}/${o.runs * 2} runs, ${payload.detail}\n`);
        },
      };
      return runAb({
        gatewayUrl: stand.conveyor.gateway.url,
        workload,
        env,
        runs: o.runs,
        warmup: o.warmup,
        concurrentPairs: !o.sequentialPairs && !workload.sequentialPairs,
        afterWarmup: o.serialWorkloads ? undefined : arrive,
        onRun: (r) => bar.increment({ detail: progressDetail(r) }),
      });
    };
    // Workloads running together start measuring together, once every one has warmed up: a
    // gateway starting its plugin processes and thread workers, or codegen's first cold imports,
    // take the two cores for seconds, and a quick workload's first measured pairs waited 2-3 s for
    // its tool behind them (calculator at 68-74% of its bound with the H100 and H200 profiles).
    const allWarm = barrier(o.workloads.length);
    const failures: Array<{ part: string; message: string }> = [];
    // A workload that fails is reported and leaves the warm-up barrier, so the others run on.
    const one = async (workload: Workload, stand: Stand): Promise<WorkloadReport | undefined> => {
      let warm = false;
      try {
        return await measure(workload, stand, () => {
          warm = true;
          return allWarm.arrive();
        });
      } catch (err) {
        failures.push({ part: `workload ${workload.name}`, message: err instanceof Error ? err.message : String(err) });
        if (!warm) allWarm.leave();
        return undefined;
      }
    };
    let settled: Array<WorkloadReport | undefined>;
    if (o.serialWorkloads) {
      settled = [];
      for (const [i, w] of o.workloads.entries()) settled.push(await one(w, stands[i]!));
    } else {
      settled = await Promise.all(o.workloads.map((w, i) => one(w, stands[i]!)));
    }
    const reports = settled.filter((r) => r !== undefined);
    bars?.stop();
    const search = o.toolProfile.search;
    const uses = (part: 'python' | 'search'): boolean => o.workloads.some((w) => w.uses?.includes(part));
    return {
      reports,
      failures,
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        toolProfile: o.toolProfile,
        pairs: pairsLine(o),
        warmupPairs: o.warmup,
        workloads:
          o.workloads.length === 1 ? 'one, with its own gateway' : o.serialWorkloads ? 'one after the other, each with its own gateway' : 'all at once, each with its own gateway, sharing the upstream',
        python: !uses('python') ? 'not used' : `${python}${env.numpy ? ' with numpy+matplotlib' : ' (stdlib only)'}${coldImports ? ', cold imports' : ', pre-imported in the fork server'}`,
        search: !uses('search') ? 'not used' : search ? `HTTP backend → search API stand-in (${search.latencyMs} ms, ${search.concurrency || 'unlimited'} at a time)` : 'in-process FTS5 index',
        sandbox: sandbox.protections(),
      },
    };
  } finally {
    await Promise.allSettled(stands.map(closeStand));
  }
}

async function startStand(o: WorkloadsOptions, coldImports: boolean): Promise<Stand> {
  const profile = o.toolProfile;
  const searchApi = profile.search ? await startSearchApiServer({ indexFile: await defaultSearchIndex(), ...profile.search }) : undefined;
  try {
    const conveyor = await startConveyor({
      // The key from the environment, as `conveyor serve` takes it: on the command line it would be
      // copied into the result files' Command line.
      gateway: { port: 0, upstream: { baseUrl: o.upstreamUrl.includes(',') ? o.upstreamUrl.split(',') : o.upstreamUrl, model: o.model, apiKey: process.env.CONVEYOR_UPSTREAM_API_KEY || undefined } },
      sandbox: coldImports ? { preImports: [] } : {},
      plugins: searchApi ? { search: { url: searchApi.urlTemplate } } : {},
      decorateTool: (tool) => (tool.name === 'python' ? withStartupLatency(tool, profile.python.startupMs) : tool),
    });
    return { conveyor, searchApi };
  } catch (err) {
    await searchApi?.close();
    throw err;
  }
}

async function closeStand(s: Stand): Promise<void> {
  await s.conveyor.close();
  await s.searchApi?.close();
}

/**
 * A progress line's last run: its time to detect for a detection workload (the validation line
 * gave the request's end, seconds after the rejection its report measures), else its latency.
 */
export function progressDetail(record: RunRecord): string {
  return `last ${record.mode}: ${record.detection ? 'detected at ' : ''}${figureMs(record).toFixed(0)} ms`;
}

/** Releases the parties together once each has arrived or left (failed before arriving). */
function barrier(parties: number): { arrive(): Promise<void>; leave(): void } {
  let counted = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  const count = () => {
    if (++counted >= parties) release();
  };
  return {
    arrive() {
      count();
      return all;
    },
    leave: count,
  };
}

const execFileAsync = promisify(execFile);

/** Asynchronous: the import takes seconds, and a Ctrl-C meanwhile must be handled at once. */
async function canImport(python: string, modules: string): Promise<boolean> {
  try {
    await execFileAsync(python, ['-c', `import ${modules}`], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** How the on/off pairs were sent, naming only the workloads that ran: the report's "pairs:" line. */
export function pairsLine(o: Pick<WorkloadsOptions, 'sequentialPairs' | 'workloads'>): string {
  if (o.sequentialPairs) return 'sequential';
  const sequential = o.workloads.flatMap((w) => (w.sequentialPairs ? [`${w.name} (${w.sequentialPairs})`] : []));
  const together = 'each on/off pair sent at the same moment';
  return sequential.length === 0 ? together : `${together}, except ${sequential.join(', ')}: sequential`;
}
