import vm from 'node:vm';
import { GuestError, type GuestJs, type GuestRunOptions } from '../../plugins/kit/guest-js.ts';
import { guestTimeoutMs } from './guest-timeout.ts';


/**
 * `ctx.guest` where isolated-vm is unavailable. `node:vm` is NOT a security boundary (a guest can
 * walk from a granted callback to the host realm's Function constructor): it runs only inside a
 * sandboxed plugin process, whose bwrap/seccomp/rlimits are the real boundary. It keeps the same
 * contract as the isolate engine (copies in and out, a timeout) so plugins behave the same.
 */
export function createNodeVmGuest(): GuestJs {
  return { engine: 'node-vm', run: (source, options) => runInNodeVm(source, options ?? {}) };
}

async function runInNodeVm(source: string, options: GuestRunOptions): Promise<unknown> {
  const timeoutMs = guestTimeoutMs(options);
  const deadline = Date.now() + timeoutMs;
  const scope: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options.globals ?? {})) scope[name] = copy(value);
  for (const [name, fn] of Object.entries(options.callbacks ?? {})) {
    scope[name] = (...args: unknown[]) => Promise.resolve().then(() => fn(...args.map(copy))).then(copy);
  }
  const context = vm.createContext(scope, { codeGeneration: { strings: false, wasm: false } });
  let value: unknown;
  try {
    value = vm.runInContext(source, context, { timeout: timeoutMs, filename: 'guest.js' });
  } catch (err) {
    throw toGuestError(err, timeoutMs);
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GuestError('timeout', `guest code ran longer than ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
  });
  try {
    const settled = await Promise.race([Promise.resolve(value), expired]);
    return copy(settled);
  } catch (err) {
    throw toGuestError(err, timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

function copy(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch (err) {
    throw new GuestError('unclonable', `value could not be copied: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function toGuestError(err: unknown, timeoutMs: number): GuestError {
  if (err instanceof GuestError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return new GuestError('timeout', `guest code ran longer than ${timeoutMs} ms`);
  // Errors thrown in the guest come from another realm: `instanceof Error` is false for them.
  const message = typeof (err as { message?: unknown } | null)?.message === 'string' ? (err as { message: string }).message : String(err);
  const name = typeof (err as { name?: unknown } | null)?.name === 'string' ? (err as { name: string }).name : 'Error';
  return new GuestError('exception', `${name}: ${message}`);
}
