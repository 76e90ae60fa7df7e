import { performance } from 'node:perf_hooks';
import { SandboxError, type SandboxQueueFullError } from '../core/errors.ts';
import { exitResult, failedResult, KILL_REASONS, killedByOf, killedResult, type CellOutcome, type CellResult, type KilledBy } from './python-cell-result.ts';
import type { CellMessage, ZygoteCommand } from './python-ipc.ts';
import { SentLines } from './python-sent-lines.ts';
import { CELL_OPEN_FILES, pythonLimitsSchema, type PythonSandboxLimits } from './python-sandbox-options.ts';
import type { ZygoteProcess } from './python-zygote-process.ts';

export type { CellError, CellResult, KilledBy } from './python-cell-result.ts';

export type CellMode = 'incremental' | 'whole';

export type CellProgress =
  /** A top-level statement (lines startLine..endLine of the cell) finished without an exception. */
  | { type: 'unit-done'; startLine: number; endLine: number }
  /** Merged stdout+stderr text, in the order the cell wrote it. */
  | { type: 'output'; text: string };

export interface OpenCellOptions {
  /** Caller's id (e.g. the tool call id); only used in messages, need not be unique. */
  id: string;
  /** Aborting it kills the cell at once. */
  signal?: AbortSignal;
  onProgress?: (progress: CellProgress) => void;
  /** 'incremental' runs each statement as soon as it is complete; 'whole' runs the text at the end. */
  mode?: CellMode;
  /** Filename in tracebacks; keep it stable so observations do not depend on scheduling. */
  filename?: string;
  /** Tighter (or looser) limits for this cell than the sandbox's defaults. */
  limits?: Partial<PythonSandboxLimits>;
}

/** What a cell needs from the sandbox that owns it. */
export interface CellHost {
  readonly limits: PythonSandboxLimits;
  /** The zygote did not confirm a kill in time: kill and replace it. */
  zygoteUnresponsive(zygote: ZygoteProcess): void;
}

const KILL_CONFIRM_MS = 2000;

/** One execution in the sandbox. Push lines, then `finish()`; results always resolve, never reject. */
export class PythonCell {
  readonly id: string;
  /** True once the cell stopped executing (first exception); later lines are kept only for the final compile check. */
  stopped = false;
  private readonly internalId: string;
  private readonly options: OpenCellOptions;
  private readonly host: CellHost;
  private readonly limits: PythonSandboxLimits;
  private readonly startedAt = performance.now();
  private zygote: ZygoteProcess | null = null;
  private queue: ZygoteCommand[] = [];
  private ended = false;
  private killedBy: KilledBy | null = null;
  private done = false;
  private readonly output: string[] = [];
  private outputUnits = 0;
  private unitsRun = 0;
  /**
   * What the cell can truthfully report: statements end on lines it was sent (SentLines), one
   * after another. Its fd 3 is the model's code's to write to.
   */
  private readonly linesSent = new SentLines();
  private lastUnitLine = 0;
  private busySince: number | null = null;
  private busyMs = 0;
  private wallTimer: NodeJS.Timeout | null = null;
  private confirmTimer: NodeJS.Timeout | null = null;
  private detachExit: (() => void) | null = null;
  private readonly result: Promise<CellResult>;
  private resolveResult!: (result: CellResult) => void;
  private readonly onAbort = (): void => this.kill('abort');

  constructor(internalId: string, options: OpenCellOptions, host: CellHost) {
    this.id = options.id;
    this.internalId = internalId;
    this.options = options;
    this.host = host;
    this.result = new Promise((r) => (this.resolveResult = r));
    const limits = { ...host.limits, ...pythonLimitsSchema.parse(options.limits ?? {}) };
    this.limits = limits;
    this.queue.push({
      t: 'open',
      id: internalId,
      mode: options.mode ?? 'incremental',
      filename: options.filename ?? '<llm-cell>',
      limits: {
        cpuSeconds: limits.cpuSeconds,
        memoryMb: limits.memoryMb,
        fileSizeMb: limits.fileSizeMb,
        maxProcesses: limits.maxProcesses,
        outputBytes: limits.outputBytes,
        openFiles: CELL_OPEN_FILES,
      },
    });
    // Already aborted: complete at once; attach() then never opens the cell.
    if (options.signal?.aborted) this.kill('abort');
    else options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Sends source text; normally one physical line with its '\n' (the last line may lack it). */
  pushLine(text: string): void {
    if (this.ended) throw new SandboxError('pushLine after finish()');
    if (this.done || text.length === 0) return;
    this.linesSent.add(text);
    this.send({ t: 'line', id: this.internalId, text });
  }

  /** Marks the end of the source; resolves when the cell has run everything (or was stopped). */
  finish(): Promise<CellResult> {
    if (!this.ended) {
      this.ended = true;
      if (!this.done) {
        this.send({ t: 'end', id: this.internalId });
        if (this.zygote !== null) this.startFinalClock();
      }
    }
    return this.result;
  }

  /** The result once the cell is done, however it ended; unlike finish(), ends nothing. */
  get settled(): Promise<CellResult> {
    return this.result;
  }

  /** Stops the cell now: SIGKILL to every process it started. Idempotent. */
  kill(reason: string): void {
    if (this.done || this.killedBy !== null) return;
    this.killedBy = KILL_REASONS.has(reason as KilledBy) ? (reason as KilledBy) : 'abort';
    this.clearWallTimer();
    if (this.zygote === null) {
      this.complete(killedResult(this.killedBy, this.outcome()));
      return;
    }
    this.zygote.send({ t: 'kill', id: this.internalId, reason: this.killedBy });
    const zygote = this.zygote;
    this.confirmTimer = setTimeout(() => this.host.zygoteUnresponsive(zygote), KILL_CONFIRM_MS);
  }

  /** Called by the sandbox once a zygote is ready for this cell. */
  attach(zygote: ZygoteProcess): void {
    if (this.done) return;
    this.zygote = zygote;
    zygote.route(this.internalId, (m) => this.receive(m));
    this.detachExit = zygote.onceExit((why) => this.fail(`the Python sandbox process died (${why})`));
    for (const command of this.queue) zygote.send(command);
    this.queue = [];
    // Time spent waiting for a (re)starting zygote is not the cell's.
    if (this.ended) this.startFinalClock();
  }

  /** The sandbox could not provide a zygote or a place (its queue is full), or the zygote died under this cell. */
  fail(reason: string | SandboxError | SandboxQueueFullError): void {
    if (this.done) return;
    const outcome = this.outcome();
    this.complete(this.killedBy !== null ? killedResult(this.killedBy, outcome) : failedResult(reason, outcome));
  }

  private send(command: ZygoteCommand): void {
    if (this.zygote) this.zygote.send(command);
    else this.queue.push(command);
  }

  private receive(message: CellMessage): void {
    if (this.done) return;
    switch (message.t) {
      case 'output':
        this.onOutput(message.text);
        break;
      case 'unit': {
        // Code in the cell can write to the same pipe: a report of lines not sent, or not after the
        // last one reported, is not the executor's (one request once sent half a million), and is dropped.
        if (!(message.a > this.lastUnitLine && message.a <= message.b && message.b <= this.linesSent.count)) break;
        this.lastUnitLine = message.b;
        this.unitsRun += 1;
        this.progress({ type: 'unit-done', startLine: message.a, endLine: message.b });
        break;
      }
      case 'busy':
        this.onBusy();
        break;
      case 'idle':
        this.onIdle();
        break;
      case 'stopped':
        this.stopped = true;
        break;
      case 'exit':
        this.onExit(message);
        break;
      case 'started':
        break;
    }
  }

  private onOutput(text: string): void {
    if (this.killedBy !== null) return;
    // UTF-16 units never exceed the UTF-8 bytes they came from, so this backstop never fires
    // before the zygote's exact byte cap does.
    const room = this.limits.outputBytes - this.outputUnits;
    if (text.length > room) {
      text = text.slice(0, Math.max(0, room));
      this.kill('output');
    }
    this.outputUnits += text.length;
    if (text.length === 0) return;
    this.output.push(text);
    this.progress({ type: 'output', text });
  }

  /**
   * While the model is still writing, only busy time counts (waiting for the next line is not
   * execution). The zygote decides busy/idle, not the cell's word: busy from each line it writes,
   * idle only once the cell has read all it was sent (cell_io.py), since the cell's code can write
   * `idle` into its control pipe. From the end of the call on, every millisecond counts.
   */
  private startFinalClock(): void {
    if (this.killedBy !== null) return;
    const now = performance.now();
    const used = this.busyMs + (this.busySince === null ? 0 : now - this.busySince);
    this.busySince = null;
    this.clearWallTimer();
    this.wallTimer = setTimeout(() => this.kill('wall-clock'), Math.max(0, this.limits.wallClockMs - used));
  }

  private onBusy(): void {
    if (this.ended || this.busySince !== null || this.killedBy !== null) return;
    this.busySince = performance.now();
    const left = Math.max(0, this.limits.wallClockMs - this.busyMs);
    this.wallTimer = setTimeout(() => this.kill('wall-clock'), left);
  }

  private onIdle(): void {
    if (this.ended || this.busySince === null) return;
    this.busyMs += performance.now() - this.busySince;
    this.busySince = null;
    this.clearWallTimer();
  }

  private clearWallTimer(): void {
    if (this.wallTimer) clearTimeout(this.wallTimer);
    this.wallTimer = null;
  }

  private onExit(message: Extract<CellMessage, { t: 'exit' }>): void {
    // A kill we asked for decides the result even if the cell finished just before it landed:
    // output after the kill request was not collected.
    const killedBy = this.killedBy ?? killedByOf(message, this.limits);
    if (killedBy !== null) {
      this.complete(killedResult(killedBy, this.outcome()));
    } else if (message.error !== undefined) {
      this.fail(message.error);
    } else {
      this.complete(exitResult(message, this.outcome()));
    }
  }

  private outcome(): CellOutcome {
    return { output: this.output.join(''), unitsRun: this.unitsRun, durationMs: this.elapsed(), limits: this.limits };
  }

  private progress(progress: CellProgress): void {
    try {
      this.options.onProgress?.(progress);
    } catch {
      // a listener's bug must not break the cell's bookkeeping
    }
  }

  private elapsed(): number {
    return Math.round((performance.now() - this.startedAt) * 10) / 10;
  }

  private complete(result: CellResult): void {
    if (this.done) return;
    this.done = true;
    this.clearWallTimer();
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.detachExit?.();
    this.zygote?.unroute(this.internalId);
    this.resolveResult(result);
  }
}
