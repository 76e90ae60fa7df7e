import { constants } from 'node:os';
import { SandboxError, SandboxLimitError, SandboxQueueFullError } from '../core/errors.ts';
import type { CellMessage } from './python-ipc.ts';
import type { PythonSandboxLimits } from './python-sandbox-options.ts';

/** `control`: the cell's code broke its control pipe's bounds (cell_io.py), or wrote what the zygote could not read. */
export type KilledBy = 'wall-clock' | 'output' | 'abort' | 'memory' | 'cpu' | 'control';

export interface CellError {
  type: string;
  message: string;
  /** The sandbox's own failure (not the code's exception): its ConveyorError code, `sandbox_queue_full` or `sandbox_error`. */
  code?: string;
  lineno?: number;
  /** The whole text failed to compile: the observation is only that error. */
  compileError: boolean;
}

export interface CellResult {
  ok: boolean;
  /** What the model sees: the merged output a whole-file run would print (+ a note when stopped). */
  observation: string;
  unitsRun: number;
  error?: CellError;
  killedBy?: KilledBy;
  /**
   * The status a script run would have exited with, as a shell's `$?` shows it: 128 + N when the
   * script would have died of signal N (`exitSignal`); absent when the cell was killed (a limit, an
   * abort) or the sandbox failed.
   */
  exitCode?: number;
  /**
   * The signal a script run would have died of, if any: 'SIGINT' after an uncaught
   * KeyboardInterrupt, which CPython re-raises on itself (`exitCode` is then 130); the signal a
   * cell died of that no limit sent (its own os.kill, a segfault).
   */
  exitSignal?: string;
  durationMs: number;
}

/** What a cell had collected when it ended. */
export interface CellOutcome {
  output: string;
  unitsRun: number;
  durationMs: number;
  limits: PythonSandboxLimits;
}

export const KILL_REASONS: ReadonlySet<KilledBy> = new Set<KilledBy>(['wall-clock', 'output', 'abort', 'memory', 'cpu', 'control']);
const SIGXCPU = 24;
const SIGKILL = 9;

type ExitMessage = Extract<CellMessage, { t: 'exit' }>;

/** Which limit (if any) ended a cell that Node did not kill itself. */
export function killedByOf(message: ExitMessage, limits: PythonSandboxLimits): KilledBy | null {
  if (message.killed === 'output' || message.killed === 'control') return message.killed;
  const signal = message.status.signal;
  if (signal === null) return null;
  if (KILL_REASONS.has(message.killed as KilledBy)) return message.killed as KilledBy;
  if (signal === SIGXCPU) return 'cpu';
  if (signal === SIGKILL) {
    // A SIGKILL nobody asked for: the CPU hard limit, the kernel's OOM killer, or a kill by the
    // code itself (os.kill) or another process. The OOM killer ran (or its count is unknown):
    // 'memory', whose note says both. It did not: the signal, as a script's shell would show it.
    if (message.cpuSeconds >= limits.cpuSeconds - 0.05) return 'cpu';
    return message.oomKills === 0 ? null : 'memory';
  }
  return null;
}

/** The result of a cell that was not killed: the observation rule lives here. */
export function exitResult(message: ExitMessage, outcome: CellOutcome): CellResult {
  const report = message.result;
  const signal = message.status.signal;
  if (report === null) return signal === null ? selfExitResult(message.status.code ?? 0, outcome) : signalResult(signal, outcome);
  // A whole-file run of text that does not compile prints nothing but the compile error; what
  // the incremental run already did is discarded from the observation.
  const observation = report.compileErrorText ?? outcome.output;
  return {
    ok: report.compileErrorText === undefined && report.ok,
    observation,
    unitsRun: outcome.unitsRun,
    durationMs: outcome.durationMs,
    ...(report.exitCode !== undefined ? { exitCode: report.exitCode } : {}),
    ...(report.exitSignal !== undefined ? { exitSignal: report.exitSignal } : {}),
    ...(report.error ? { error: report.error } : {}),
  };
}

/** The cell ended itself without a report (os._exit): like a script that did the same. */
function selfExitResult(code: number, outcome: CellOutcome): CellResult {
  return {
    ok: code === 0,
    observation: outcome.output,
    unitsRun: outcome.unitsRun,
    durationMs: outcome.durationMs,
    exitCode: code,
    ...(code === 0 ? {} : { error: { type: 'SystemExit', message: `exit code ${code}`, compileError: false } }),
  };
}

/** The cell died of a signal no limit sent (its own os.kill, a segfault). */
function signalResult(signal: number, outcome: CellOutcome): CellResult {
  const name = signalName(signal);
  const crash = new SandboxError(`the cell process died with signal ${signal}${name ? ` (${name})` : ''}`);
  return {
    ok: false,
    observation: withNote(outcome.output, crash.message),
    unitsRun: outcome.unitsRun,
    durationMs: outcome.durationMs,
    // What a shell's $? shows for a script that died of the signal.
    exitCode: 128 + signal,
    ...(name ? { exitSignal: name } : {}),
    error: { type: crash.name, message: crash.message, compileError: false },
  };
}

function signalName(signal: number): string | undefined {
  return Object.entries(constants.signals).find(([, number]) => number === signal)?.[0];
}

export function killedResult(killedBy: KilledBy, outcome: CellOutcome): CellResult {
  const { limits } = outcome;
  const notes: Record<KilledBy, [string, string]> = {
    'wall-clock': ['wallClockMs', `execution stopped: the cell ran longer than ${limits.wallClockMs} ms`],
    output: ['outputBytes', `execution stopped: the cell printed more than ${limits.outputBytes} bytes`],
    abort: ['abort', 'execution aborted'],
    // Not a certainty: the cell's own allocations past its limit raise MemoryError instead, and
    // the OOM killer's count is host-wide (or unknown), so the kill could be anyone's.
    memory: [
      'memoryMb',
      `execution stopped: the cell was killed (SIGKILL): out of memory (its limit is ${limits.memoryMb} MB), or a signal from its own code or another process`,
    ],
    cpu: ['cpuSeconds', `execution stopped: the cell used more than ${limits.cpuSeconds} s of CPU time`],
    control: ['controlPipe', 'execution stopped: the cell wrote to its control pipe (fd 3) what the sandbox does not take'],
  };
  const [limit, note] = notes[killedBy];
  const error = new SandboxLimitError(limit, note);
  return {
    ok: false,
    observation: withNote(outcome.output, note),
    unitsRun: outcome.unitsRun,
    error: { type: error.name, message: error.message, compileError: false },
    killedBy,
    durationMs: outcome.durationMs,
  };
}

/** The sandbox itself failed under the cell (zygote died, could not start). */
export function failedResult(reason: string | SandboxError | SandboxQueueFullError, outcome: CellOutcome): CellResult {
  const error = typeof reason === 'string' ? new SandboxError(reason) : reason;
  return {
    ok: false,
    observation: withNote(outcome.output, error.message),
    unitsRun: outcome.unitsRun,
    error: { type: error.name, message: error.message, code: error.code, compileError: false },
    durationMs: outcome.durationMs,
  };
}

function withNote(output: string, note: string): string {
  const sep = output.length === 0 || output.endsWith('\n') ? '' : '\n';
  return `${output}${sep}[${note}]`;
}
