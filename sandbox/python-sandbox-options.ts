import { existsSync } from 'node:fs';
import { z } from 'zod';
import { MAX_TIMER_MS, MAX_TIMER_MS_RULE } from '../core/max-timer-ms.ts';
import { sandboxModeFromEnv } from './sandbox-mode-env.ts';

/** Per-cell limits. The memory budget is address space on top of the pre-loaded zygote image. */
export interface PythonSandboxLimits {
  /** RLIMIT_CPU (soft; the hard limit is one second later). */
  cpuSeconds: number;
  /** RLIMIT_AS budget added to the zygote's mapped image (numpy + matplotlib ≈ 320 MiB). */
  memoryMb: number;
  /** RLIMIT_FSIZE: largest file a cell may write. */
  fileSizeMb: number;
  /** RLIMIT_NPROC for the cell uid (shared by all cells of one zygote under bwrap). */
  maxProcesses: number;
  /** Merged stdout+stderr bytes a cell may print before it is killed. */
  outputBytes: number;
  /** Time a cell may spend executing (idle waits for the next line do not count). */
  wallClockMs: number;
}

export const DEFAULT_PYTHON_LIMITS: Readonly<PythonSandboxLimits> = Object.freeze({
  cpuSeconds: 30,
  memoryMb: 1024,
  fileSizeMb: 64,
  maxProcesses: 64,
  outputBytes: 256 * 1024,
  wallClockMs: 30_000,
});

/** Descriptors a cell may hold open (RLIMIT_NOFILE); not worth an option. */
export const CELL_OPEN_FILES = 256;

export type SandboxModeOption = 'auto' | 'bwrap' | 'netns' | 'none';

export interface PythonSandboxOptions {
  /** Interpreter; default: $CONVEYOR_PYTHON, else /usr/bin/python3 if it exists, else python3 on PATH. */
  python?: string;
  /** Modules imported once in the zygote (each only if importable). Default: numpy, matplotlib.pyplot (Agg). */
  preImports?: string[];
  limits?: Partial<PythonSandboxLimits>;
  /** 'auto' tries bwrap, then a network namespace (unshare -n), then none. Default: $CONVEYOR_SANDBOX, else 'auto'. */
  sandbox?: SandboxModeOption;
  /** How long the zygote may take to import and probe before a mode counts as broken. */
  startupTimeoutMs?: number;
  /**
   * Cells open at once (each a forked process, open from the call's first line to its end).
   * Default 256: about 1.5 GB of cells, and well above the streams one gateway decodes at once.
   */
  maxCells?: number;
  /** Cells waiting for one of those places; one more fails at once ("the python runtime is busy"). Default 1024. */
  maxQueuedCells?: number;
}

export const DEFAULT_PRE_IMPORTS: readonly string[] = ['numpy', 'matplotlib.pyplot'];

const positiveInt = z.number().int().positive();
const timerMs = positiveInt.max(MAX_TIMER_MS, `must be ${MAX_TIMER_MS_RULE}`);

/** Validates limit overrides (sandbox-wide or per cell). */
export const pythonLimitsSchema = z
  .strictObject({
    cpuSeconds: positiveInt,
    memoryMb: positiveInt,
    fileSizeMb: positiveInt,
    maxProcesses: positiveInt,
    outputBytes: positiveInt,
    wallClockMs: timerMs,
  })
  .partial();

export const pythonSandboxOptionsSchema = z.strictObject({
  python: z.string().min(1).optional(),
  preImports: z.array(z.string().regex(/^[A-Za-z_][\w.]*$/, 'a dotted module name')).optional(),
  limits: pythonLimitsSchema.optional(),
  sandbox: z.enum(['auto', 'bwrap', 'netns', 'none']).optional(),
  startupTimeoutMs: timerMs.optional(),
  maxCells: positiveInt.optional(),
  maxQueuedCells: z.number().int().nonnegative().optional(),
});

export interface ResolvedPythonSandboxOptions {
  python: string;
  preImports: string[];
  limits: PythonSandboxLimits;
  sandbox: SandboxModeOption;
  startupTimeoutMs: number;
  maxCells: number;
  maxQueuedCells: number;
}

export function resolvePythonSandboxOptions(options: PythonSandboxOptions = {}): ResolvedPythonSandboxOptions {
  const parsed = pythonSandboxOptionsSchema.parse(options);
  return {
    python: parsed.python ?? defaultPython(),
    preImports: parsed.preImports ?? [...DEFAULT_PRE_IMPORTS],
    limits: { ...DEFAULT_PYTHON_LIMITS, ...parsed.limits },
    sandbox: parsed.sandbox ?? sandboxModeFromEnv(),
    startupTimeoutMs: parsed.startupTimeoutMs ?? 30_000,
    maxCells: parsed.maxCells ?? 256,
    maxQueuedCells: parsed.maxQueuedCells ?? 1024,
  };
}

function defaultPython(): string {
  const fromEnv = process.env['CONVEYOR_PYTHON'];
  if (fromEnv) return fromEnv;
  // Debian's interpreter is where apt installs numpy, matplotlib and python3-seccomp.
  if (existsSync('/usr/bin/python3')) return '/usr/bin/python3';
  return 'python3';
}
