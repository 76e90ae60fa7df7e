import { z } from 'zod';
import { thrownMessage } from '../../core/errors.ts';
import { OnLoadFailedError, OnLoadLimitError } from './on-load-limit.ts';

/** The hooks whose throw fails a call (onAbort's is swallowed). */
export const THROWING_HOOKS = ['onLoad', 'onStart', 'onPiece', 'onEnd'] as const;
export type HookName = (typeof THROWING_HOOKS)[number];

/** A hook's throw as the gateway logs it: which hook, and the stack (the value as JSON for a thrown non-Error). */
export interface HookThrow {
  hook: HookName;
  stack: string;
}

/** A hook's throw with the call it failed, for the gateway log. */
export interface HookErrorReport extends HookThrow {
  plugin: string;
  runtime: 'inline' | 'thread' | 'process' | 'isolate';
  /** The call's id as the request knows it (ctx.callId). */
  callId: string;
}

/**
 * Where the runtimes report a hook's throw (RuntimePoolsOptions.onHookError): the call's tool error
 * quotes only the message, so the stack, with the file and line an author needs, goes here.
 */
export type HookErrorLog = (report: HookErrorReport) => void;

/** Longest stack passed on: a deep recursion's is thousands of frames of the same line. */
const MAX_STACK = 8000;

/** A HookThrow as a plugin process sends it (plugin-protocol.ts). */
export const hookThrowSchema = z.object({ hook: z.enum(THROWING_HOOKS), stack: z.string().max(MAX_STACK + 1) });

/**
 * What to log of `err`, thrown while `hook` ran (undefined: no hook was running, the plugin's
 * module failed to load). Undefined too for an onLoad past its limit, which is the runtime's limit,
 * not a throw; an onLoad throw is reported as onLoad's, whichever hook's call met it.
 */
export function hookThrowOf(hook: HookName | undefined, err: unknown): HookThrow | undefined {
  if (err instanceof OnLoadLimitError) return undefined;
  if (err instanceof OnLoadFailedError) return { hook: 'onLoad', stack: stackOf(err.cause) };
  return hook === undefined ? undefined : { hook, stack: stackOf(err) };
}

function stackOf(err: unknown): string {
  const stack = (err as { stack?: unknown } | null)?.stack;
  const text = typeof stack === 'string' && stack !== '' ? stack : thrownMessage(err);
  return text.length > MAX_STACK ? `${text.slice(0, MAX_STACK)}…` : text;
}
