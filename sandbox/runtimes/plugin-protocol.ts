import { z } from 'zod';
import type { Piece } from '../../parsers/parser-events.ts';

/**
 * The plugin protocol: NDJSON over the fd-3 socketpair between the gateway and a plugin process
 * (runtime `process`, or the shared isolate host). One JSON object per line, split on '\n'
 * only; every message but `ready`/`loaded` carries the callId, so one process can serve several
 * calls (the isolate host does). Any language can implement the child side: read fd 3, answer
 * `ready` first, then answer each `piece` with a `verdict` and each `end` with a `result`.
 *
 * Messages from the child are validated here: the child runs untrusted code, so nothing it sends
 * is trusted to have the right shape, and an invalid line kills it.
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
  | { t: 'abort'; callId: string; reason: string };

const callId = z.string().min(1).max(200);

const progressSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unit-done'), detail: z.string().max(10_000) }),
  z.object({ type: z.literal('output'), stream: z.enum(['stdout', 'stderr']), text: z.string().max(1_000_000) }),
]);

export const childMessageSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('ready'),
    pid: z.number().int(),
    /** The engine behind ctx.guest in this process ('none' for non-JS children). */
    guest: z.enum(['isolated-vm', 'node-vm', 'none']),
    /** Why the requested guest engine could not be loaded, if it could not. */
    guestError: z.string().optional(),
  }),
  z.object({ t: z.literal('loaded'), module: z.string(), plugin: z.string().optional(), error: z.string().optional() }),
  z.object({ t: z.literal('progress'), callId, progress: progressSchema }),
  z.object({ t: z.literal('verdict'), callId, seq: z.number().int(), reject: z.string().max(10_000).optional() }),
  z.object({
    t: z.literal('result'),
    callId,
    ok: z.boolean(),
    content: z.string(),
    data: z.record(z.string(), z.unknown()).optional(),
  }),
]);
export type ChildMessage = z.infer<typeof childMessageSchema>;
export type CallMessage = Extract<ChildMessage, { callId: string }>;
