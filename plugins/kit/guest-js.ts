/**
 * Untrusted JavaScript evaluation for plugins (runtime `isolate`, or its `process` fallback).
 *
 * A plugin's hooks are trusted code written by its author; what the model (or a user) wrote is
 * not. `ctx.guest.run(source)` evaluates such source where it cannot reach Node: in an
 * isolated-vm isolate (memory limit, CPU timeout, nothing but the globals and callbacks granted
 * here), or, where isolated-vm is unavailable, in a `node:vm` context inside the sandboxed plugin
 * process (then the process sandbox is the boundary: `node:vm` alone is not one).
 *
 * @example
 * // in a plugin module with runtime: 'isolate'
 * onEnd: async ({ code }, ctx) => {
 *   const value = await ctx.guest!.run(code, {
 *     globals: { rows: [1, 2, 3] },
 *     callbacks: { lookup: (id) => ({ id, name: `item ${String(id)}` }) },
 *     timeoutMs: 200,
 *   });
 *   return JSON.stringify(value);
 * }
 */
export interface GuestJs {
  /** Which engine evaluates guest code here. */
  readonly engine: 'isolated-vm' | 'node-vm';
  /**
   * Evaluates `source` as a classic script in a fresh global scope and resolves with a copy of
   * its completion value (awaited if it is a promise). Rejects with a `GuestError` on an
   * exception, a timeout or the memory limit.
   */
  run(source: string, options?: GuestRunOptions): Promise<unknown>;
}

/**
 * What `ctx.guest.run(source, options)` hands the guest: copied globals, host callbacks it may
 * await, and its time budget.
 *
 * @example
 * await ctx.guest!.run('total(rows)', { globals: { rows: [1, 2] }, callbacks: { total: (r) => (r as number[]).length }, timeoutMs: 100 });
 */
export interface GuestRunOptions {
  /** Copied into the guest's global scope (structured clone: no functions, no class instances). */
  globals?: Record<string, unknown>;
  /**
   * Host functions the guest may call by name. The guest sees an async function: its arguments
   * reach the host as copies, and the (awaited) return value goes back as a copy. The guest
   * never holds a host object or an isolated-vm handle.
   */
  callbacks?: Record<string, (...args: unknown[]) => unknown>;
  /**
   * CPU and wall-clock budget for this evaluation, callbacks included: whole milliseconds from 1
   * to 2^31 − 1 (the longest timer Node keeps; anything else rejects with a RangeError). Default 1000 ms.
   */
  timeoutMs?: number;
}

/**
 * Why a guest evaluation failed; `kind` is stable: `exception` (the guest threw), `timeout`,
 * `memory` (the isolate's memoryMb), `unclonable` (a value that cannot be copied in or out).
 *
 * @example
 * onEnd: async ({ code }, ctx) => {
 *   try {
 *     return String(await ctx.guest!.run(code, { timeoutMs: 50 }));
 *   } catch (err) {
 *     if (err instanceof GuestError && err.kind === 'timeout') return { ok: false, content: 'the code ran past 50 ms' };
 *     throw err;
 *   }
 * }
 */
export class GuestError extends Error {
  readonly kind: 'exception' | 'timeout' | 'memory' | 'unclonable';
  constructor(kind: 'exception' | 'timeout' | 'memory' | 'unclonable', message: string) {
    super(message);
    this.name = 'GuestError';
    this.kind = kind;
  }
}
