import { rmSync } from 'node:fs';
import { SandboxError, SandboxQueueFullError } from '../core/errors.ts';
import { PythonCell, type OpenCellOptions } from './python-cell.ts';
import { candidateModes, inspectInterpreter, planLaunch, stageScripts, tmpfsBytes, type LaunchContext, type LaunchPlan, type SandboxMode } from './python-launch.ts';
import { describeProtections, type SandboxProtections } from './python-protections.ts';
import { CELL_OPEN_FILES, resolvePythonSandboxOptions, type PythonSandboxLimits, type PythonSandboxOptions, type ResolvedPythonSandboxOptions } from './python-sandbox-options.ts';
import { ZygoteProcess } from './python-zygote-process.ts';
import { BoundedQueue } from '../core/bounded-queue.ts';

export type { PythonSandboxOptions, PythonSandboxLimits } from './python-sandbox-options.ts';
export type { SandboxProtections } from './python-protections.ts';
export type { CellError, CellMode, CellProgress, CellResult, KilledBy, OpenCellOptions, PythonCell } from './python-cell.ts';

export interface PythonCellLoad {
  open: number;
  queued: number;
  maxCells: number;
  maxQueuedCells: number;
}

/** The shared Python runtime of one gateway process: one zygote, many concurrent cells. */
export interface PythonSandbox {
  /** The interpreter the zygote runs (resolved: a pyenv shim becomes the real binary). */
  readonly python: string;
  /** What isolates cells on this machine, as measured at startup. */
  protections(): SandboxProtections;
  /**
   * Opens a cell; it starts as soon as the zygote is ready (restarting a crashed one first) and one
   * of the `maxCells` places is free. With `maxQueuedCells` already waiting, it fails at once.
   */
  openCell(options: OpenCellOptions): PythonCell;
  /** Cells open and waiting now, and the bounds (GET /health). */
  cellLoad(): PythonCellLoad;
  /** Host pids of every live process started for cells (for tests and diagnostics). */
  cellPids(): number[];
  /** Host pid of the zygote, or null while none runs (for tests and diagnostics). */
  zygotePid(): number | null;
  close(): Promise<void>;
}

/**
 * Starts the zygote under the strongest isolation that works here ('auto': bwrap, then a
 * network namespace, then none) and resolves once it is warm.
 *
 * @example
 * const sandbox = await startPythonSandbox({ limits: { wallClockMs: 10_000 } });
 * const cell = sandbox.openCell({ id: 'call_1' });
 * cell.pushLine('print(6 * 7)\n');
 * const result = await cell.finish(); // result.observation === '42\n'
 * await sandbox.close();
 */
export async function startPythonSandbox(options: PythonSandboxOptions = {}): Promise<PythonSandbox> {
  const resolved = resolvePythonSandboxOptions(options);
  const interpreter = await inspectInterpreter(resolved.python);
  const staging = stageScripts();
  const ctx: LaunchContext = { interpreter, staging, config: zygoteConfig(resolved), tmpBytes: tmpfsBytes(resolved.limits) };
  const fallbacks: Array<{ mode: SandboxMode; error: string }> = [];
  for (const mode of candidateModes(resolved.sandbox)) {
    let zygote: ZygoteProcess | null = null;
    try {
      const plan = planLaunch(mode, ctx);
      zygote = await ZygoteProcess.start(plan, resolved.startupTimeoutMs);
      const protections = describeProtections(mode, zygote.ready, resolved.limits, CELL_OPEN_FILES, fallbacks, zygote.hostUid());
      if (mode !== 'none' && !protections.netns) throw new SandboxError(`${mode} started but the cell's network namespace is the host's`);
      if (zygote.ready.probe === null) throw new SandboxError(`${mode} started but its probe cell failed: ${zygote.lastStderr()}`);
      return new PythonSandboxHandle(resolved, plan, zygote, protections, staging.root);
    } catch (err) {
      zygote?.kill('rejected');
      fallbacks.push({ mode, error: err instanceof Error ? err.message : String(err) });
    }
  }
  rmSync(staging.root, { recursive: true, force: true });
  throw new SandboxError(`no Python sandbox mode works here: ${fallbacks.map((f) => `${f.mode}: ${f.error}`).join('; ')}`);
}

function zygoteConfig(options: ResolvedPythonSandboxOptions): string {
  const { limits } = options;
  return JSON.stringify({
    preImports: options.preImports,
    prewarm: true,
    limits: {
      cpuSeconds: limits.cpuSeconds,
      memoryMb: limits.memoryMb,
      fileSizeMb: limits.fileSizeMb,
      maxProcesses: limits.maxProcesses,
      outputBytes: limits.outputBytes,
      openFiles: CELL_OPEN_FILES,
    },
  });
}

class PythonSandboxHandle implements PythonSandbox {
  private readonly options: ResolvedPythonSandboxOptions;
  private readonly plan: LaunchPlan;
  private readonly report: SandboxProtections;
  private readonly stagingRoot: string;
  readonly limits: PythonSandboxLimits;
  readonly python: string;
  private zygote: ZygoteProcess | null;
  private starting: Promise<ZygoteProcess> | null = null;
  private cellCounter = 0;
  private readonly places: BoundedQueue;
  private closed = false;
  private readonly cleanupOnExit = (): void => rmSync(this.stagingRoot, { recursive: true, force: true });

  constructor(
    options: ResolvedPythonSandboxOptions,
    plan: LaunchPlan,
    zygote: ZygoteProcess,
    report: SandboxProtections,
    stagingRoot: string,
  ) {
    this.options = options;
    this.plan = plan;
    this.report = report;
    this.stagingRoot = stagingRoot;
    this.limits = options.limits;
    this.places = new BoundedQueue(options.maxCells, options.maxQueuedCells, SandboxQueueFullError.refusal('python'));
    this.python = zygote.ready.executable;
    this.zygote = null;
    this.adopt(zygote);
    process.once('exit', this.cleanupOnExit);
  }

  protections(): SandboxProtections {
    return this.report;
  }

  openCell(options: OpenCellOptions): PythonCell {
    if (this.closed) throw new SandboxError('the Python sandbox is closed');
    const cell = new PythonCell(`c${++this.cellCounter}`, options, this);
    const release = this.places.tryAcquire();
    if (release !== undefined) {
      this.start(cell, release);
    } else {
      // Lines pushed meanwhile wait in the cell; its clock starts when it does.
      this.places.acquire(options.signal).then(
        (granted) => this.start(cell, granted),
        // A full queue keeps its type and code (the tool result's data.code), as the other runtimes' refusals do.
        (err: unknown) => cell.fail(err instanceof SandboxQueueFullError ? err : err instanceof Error ? err.message : String(err)),
      );
    }
    return cell;
  }

  cellLoad(): PythonCellLoad {
    return { open: this.places.active, queued: this.places.waiting, maxCells: this.places.capacity, maxQueuedCells: this.places.maxWaiting };
  }

  /** The cell has its place: it runs on the zygote, or as soon as one is ready. */
  private start(cell: PythonCell, release: () => void): void {
    void cell.settled.then(release);
    const zygote = this.zygote;
    if (zygote?.alive) {
      cell.attach(zygote);
    } else {
      this.ensureZygote().then(
        (z) => cell.attach(z),
        (err: unknown) => cell.fail(err instanceof Error ? err.message : String(err)),
      );
    }
  }

  cellPids(): number[] {
    return this.zygote?.alive ? this.zygote.cellPids() : [];
  }

  zygotePid(): number | null {
    return this.zygote?.alive ? this.zygote.hostPid() : null;
  }

  /** A cell's kill was not confirmed in time: the zygote is stuck, so replace it. */
  zygoteUnresponsive(zygote: ZygoteProcess): void {
    zygote.kill('unresponsive: a kill was not confirmed');
    if (this.zygote === zygote) this.zygote = null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = this.starting;
    const zygote = this.zygote;
    this.zygote = null;
    await zygote?.close();
    if (pending) await pending.then((z) => z.close(), () => undefined);
    process.off('exit', this.cleanupOnExit);
    this.cleanupOnExit();
  }

  private adopt(zygote: ZygoteProcess): void {
    this.zygote = zygote;
    zygote.onceExit(() => {
      if (this.zygote === zygote) this.zygote = null;
    });
  }

  /** Restarts a crashed zygote with the mode that worked at startup; one restart at a time. */
  private ensureZygote(): Promise<ZygoteProcess> {
    if (this.zygote?.alive) return Promise.resolve(this.zygote);
    if (this.starting) return this.starting;
    this.starting = ZygoteProcess.start(this.plan, this.options.startupTimeoutMs).then(
      (zygote) => {
        this.starting = null;
        if (this.closed) {
          void zygote.close();
          throw new SandboxError('the Python sandbox is closed');
        }
        this.adopt(zygote);
        return zygote;
      },
      (err: unknown) => {
        this.starting = null;
        throw err;
      },
    );
    return this.starting;
  }
}
