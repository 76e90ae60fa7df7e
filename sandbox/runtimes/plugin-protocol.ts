import { z } from 'zod';
import type { Piece } from '../../parsers/parser-events.ts';
import { hookThrowSchema } from './hook-throw.ts';

/**
 * The plugin protocol: NDJSON over the fd-3 socketpair between the gateway and a plugin process
 * (runtime `process`, or the shared isolate host). One JSON object per line, split on '\n'
 * only; every message but `ready`/`loaded` carries the callId, so one process can serve several
 * calls (the isolate host does). Any language can implement the child side: read fd 3, answer
 * `ready` first, then answer each `piece` with a `verdict`, each `end` with a `result` (once what the
 * call printed is flushed: output read after it counts against a kept process's next call) and each
 * `abort` with `aborted` (once its clean-up is done; a child that does not answer is killed
 * ON_ABORT_GRACE_MS, 1 s, after the abort).
 *
 * Messages from the child are validated here: the child runs untrusted code, so nothing it sends
 * is trusted to have the right shape, and an invalid line kills it; so does, from a process of
 * runtime `process`, a message under a callId it was never given (PluginProcess.oneCallAtATime).
 */

/** Messages the gateway sends. */
export type HostMessage =
  /** Import a plugin module ahead of the first call (warm spare); answered by `loaded`. */
  | { t: 'load'; module: string }
  /**
   * Open a call: import the module (if not yet), build the hook context, run onStart. `callId`
   * is unique per gateway (a shared host serves calls of many requests, whose own call ids may
   * repeat); `toolCallId` is the call's id as the request knows it (ctx.callId).
   */
  | { t: 'start'; callId: string; toolCallId: string; module?: string; plugin: string; memoryMb?: number }
  | { t: 'piece'; callId: string; seq: number; piece: Piece }
  /** The whole call is decoded; `args` passed the gateway's schema check. */
  | { t: 'end'; callId: string; args: Record<string, unknown> }
  /**
   * The call ends other than by `end` (request gone, rejected, a hook failed, invalid arguments, a
   * time limit): abort ctx.signal, run onAbort, then answer `aborted`, and send no `result` for the
   * call after that. The gateway waits for that answer ON_ABORT_GRACE_MS (call-clock.ts) at most,
   * then kills the process (runtime `process`). An `abort` after `end` can cross the call's
   * `result` on the wire: whichever of `result` and `aborted` the gateway reads first ends the call.
   */
  | { t: 'abort'; callId: string; reason: string };

const callId = z.string().min(1).max(200);

/** Longest `unit-done` detail, and longest `output` text, one ctx.emit may carry. */
export const MAX_PROGRESS_DETAIL = 10_000;
export const MAX_PROGRESS_TEXT = 1_000_000;
/** Longest reason a `verdict` may carry; the kit cuts a longer reject(reason) to it (verdictOf). */
export const MAX_REJECT_REASON = 10_000;

/**
 * A ToolProgress as a plugin may send it: checked where ctx.emit is called, in every runtime
 * (plugins/kit/check-hook-output.ts: progressOf), and again at the seams a plugin could bypass
 * that (this protocol, the thread pool's port).
 */
export const progressSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unit-done'), detail: z.string().max(MAX_PROGRESS_DETAIL) }),
  z.object({ type: z.literal('output'), stream: z.enum(['stdout', 'stderr']), text: z.string().max(MAX_PROGRESS_TEXT) }),
]);

/**
 * An optional field of a child message, where JSON `null` counts as absent: a plugin in Python
 * naturally writes `'data': None`, or `'reject': None if ok else why`, and was killed for it
 * (`data: expected object, received null`), turning an accepted piece into a failed call. The
 * parsed message has no null in it: such a field reads `undefined` downstream, as if left out.
 * Required fields stay strict (`"content": None` is still refused, and says so).
 */
const absentIfNull = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === null ? undefined : value), schema.optional());

export const childMessageSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('ready'),
    pid: z.number().int(),
    /** The engine behind ctx.guest in this process ('none' for non-JS children). */
    guest: z.enum(['isolated-vm', 'node-vm', 'none']),
    /** Why the requested guest engine could not be loaded, if it could not. */
    guestError: absentIfNull(z.string()),
  }),
  z.object({ t: z.literal('loaded'), module: z.string(), plugin: absentIfNull(z.string()), error: absentIfNull(z.string()) }),
  z.object({ t: z.literal('progress'), callId, progress: progressSchema }),
  z.object({
    t: z.literal('verdict'),
    callId,
    seq: z.number().int(),
    // A blank reason is refused as the kit's verdictOf refuses reject(''): the model would read
    // "rejected the call: " and nothing on what to write instead.
    reject: absentIfNull(z.string().regex(/\S/, 'a reject with no reason: the model reads the reason to know what to write instead').max(MAX_REJECT_REASON)),
  }),
  z.object({
    t: z.literal('result'),
    callId,
    ok: z.boolean(),
    content: z.string(),
    data: absentIfNull(z.record(z.string(), z.unknown())),
    /**
     * CPU time the process has used so far, all calls and its start-up (RLIMIT_CPU counts it so):
     * a reusable plugin's process (ProcessRecipe.reuse) is kept for another call only while its
     * CPU limit leaves that call its whole share, and only if it says.
     */
    cpuMs: absentIfNull(z.number().nonnegative()),
    /** onEnd threw (the result is its error): which hook, and the stack, for the gateway log. */
    thrown: absentIfNull(hookThrowSchema),
  }),
  /**
   * onStart or onPiece threw, onPiece returned something else than a verdict, or the module did not
   * load: `content` is the call's tool error. The gateway ends the call at once (then sends
   * `abort`), as the inline runtime does, rather than at `end`.
   */
  z.object({
    t: z.literal('failed'),
    callId,
    content: z.string(),
    /**
     * The call's data.code where it is not the plugin's own error: its onLoad ran past the runtime's
     * limit, or the module exports another plugin (PluginNameMismatchError).
     */
    code: absentIfNull(z.enum(['sandbox_limit_exceeded', 'sandbox_error'])),
    /** A hook threw: which, and the stack, for the gateway log (`content` quotes only the message). */
    thrown: absentIfNull(hookThrowSchema),
  }),
  /** The answer to `abort`: onAbort has settled (or there was none, or no such call): kill now. */
  z.object({ t: z.literal('aborted'), callId }),
]);
export type ChildMessage = z.infer<typeof childMessageSchema>;
export type CallMessage = Extract<ChildMessage, { callId: string }>;

const MESSAGE_TYPES = childMessageSchema.options.map((option) => option.shape.t.value).join(', ');

/**
 * One protocol line from a child, parsed and checked; else why it is refused, in words its author
 * can act on without reading the schema (the first problem zod finds, field named):
 * `content: expected string, received object`, `t: "log" is not a message type: …`, `not JSON`.
 */
export function parseChildMessage(line: string): { message: ChildMessage } | { why: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { why: 'not JSON' };
  }
  const parsed = childMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  const issue = parsed.error.issues[0];
  if (!issue || issue.path.length === 0) {
    const got = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
    return { why: `expected an object, received ${got}` };
  }
  if (issue.code === 'invalid_union' && issue.path.join('.') === 't') {
    const t = (value as { t?: unknown }).t;
    return { why: `t: ${t === undefined ? 'missing' : `${JSON.stringify(t)} is not a message type`}: ${MESSAGE_TYPES}` };
  }
  // zod's own words, less its prefix, and `record` (its name for `data`'s type) as JSON says it.
  const words = issue.message.replace(/^Invalid (input|option): /, '').replace(/\brecord\b/, 'object');
  return { why: `${issue.path.join('.')}: ${words}` };
}
