import { z } from 'zod';

/**
 * NDJSON messages between Node and the Python zygote over the fd-3 socketpair (research note §5).
 * Every message from the zygote is validated here: the zygote runs next to untrusted code, so
 * nothing it sends is trusted to have the right shape.
 */

const cellId = z.string().min(1);

const childError = z.object({
  type: z.string(),
  message: z.string(),
  lineno: z.number().int().optional(),
  compileError: z.boolean(),
});

/** What the cell process itself reported at its end (absent when it was killed or crashed). */
export const cellReportSchema = z.object({
  ok: z.boolean(),
  unitsRun: z.number().int().nonnegative(),
  exitCode: z.number().int().optional(),
  /** The signal a script run would have died of ('SIGINT' after an uncaught KeyboardInterrupt). */
  exitSignal: z.string().optional(),
  error: childError.optional(),
  /** Set when the whole text does not compile: the only thing a whole-file run would print. */
  compileErrorText: z.string().optional(),
});
export type CellReport = z.infer<typeof cellReportSchema>;

export const probeReportSchema = z.object({
  uid: z.number().int(),
  gid: z.number().int(),
  seccomp: z.boolean(),
  inetDenied: z.boolean(),
  noNewPrivs: z.boolean(),
  netns: z.string(),
  stdlibReadable: z.boolean(),
  rlimits: z.record(z.string(), z.number()),
});
export type ProbeReport = z.infer<typeof probeReportSchema>;

export const readyMessageSchema = z.object({
  t: z.literal('ready'),
  pid: z.number().int(),
  python: z.string(),
  executable: z.string(),
  preImports: z.object({
    loaded: z.array(z.string()),
    failed: z.array(z.object({ name: z.string(), error: z.string() })),
  }),
  seccompAvailable: z.boolean(),
  seccompError: z.string().nullable(),
  uidDrop: z.boolean(),
  /** Why cells keep the zygote's uid although it is root, if they do. */
  uidNote: z.string().nullable(),
  euid: z.number().int(),
  probe: probeReportSchema.nullable(),
  /** Each cell runs in its own user, PID, IPC and mount namespaces (measured by the probe cell). */
  cellNamespaces: z.boolean(),
  /** Why they were asked for and are not used, if so. */
  cellNamespacesNote: z.string().nullable(),
  netns: z.string(),
  startupMs: z.number(),
});
export type ReadyMessage = z.infer<typeof readyMessageSchema>;

export const cellMessageSchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('started'), id: cellId, pid: z.number().int() }),
  z.object({ t: z.literal('output'), id: cellId, text: z.string() }),
  z.object({ t: z.literal('unit'), id: cellId, a: z.number().int(), b: z.number().int() }),
  z.object({ t: z.literal('busy'), id: cellId }),
  z.object({ t: z.literal('idle'), id: cellId }),
  z.object({ t: z.literal('stopped'), id: cellId }),
  z.object({
    t: z.literal('exit'),
    id: cellId,
    result: cellReportSchema.nullable(),
    killed: z.string().nullable(),
    status: z.object({ code: z.number().int().nullable(), signal: z.number().int().nullable() }),
    cpuSeconds: z.number(),
    maxRssKb: z.number().optional(),
    /** The kernel's OOM kills (host-wide) while the cell ran; null where they cannot be counted. */
    oomKills: z.number().int().nullable().optional(),
    error: z.string().optional(),
  }),
]);
export type CellMessage = z.infer<typeof cellMessageSchema>;

export const zygoteMessageSchema = z.union([readyMessageSchema, cellMessageSchema]);
export type ZygoteMessage = z.infer<typeof zygoteMessageSchema>;

/** Messages Node sends; limits use the Python side's names. */
export type ZygoteCommand =
  | {
      t: 'open';
      id: string;
      mode: 'incremental' | 'whole';
      filename: string;
      limits: {
        cpuSeconds: number;
        memoryMb: number;
        fileSizeMb: number;
        maxProcesses: number;
        outputBytes: number;
        openFiles: number;
      };
    }
  | { t: 'line'; id: string; text: string }
  | { t: 'end'; id: string }
  | { t: 'kill'; id: string; reason: string }
  | { t: 'shutdown' };

/**
 * Splits a character stream into lines on '\n' only (never on U+2028 and friends). Only the new
 * chunk is searched: the held part has no '\n', and rescanning it on every read made a long line
 * (a plugin's multi-megabyte result, read 64 KiB at a time) quadratic on the gateway's event loop.
 */
export class NdjsonLineSplitter {
  private buffer = '';

  push(chunk: string): string[] {
    let nl = chunk.indexOf('\n');
    if (nl < 0) {
      this.buffer += chunk;
      return [];
    }
    const lines = [this.buffer + chunk.slice(0, nl)];
    let start = nl + 1;
    for (nl = chunk.indexOf('\n', start); nl >= 0; nl = chunk.indexOf('\n', start)) {
      lines.push(chunk.slice(start, nl));
      start = nl + 1;
    }
    this.buffer = chunk.slice(start);
    return lines;
  }
}
