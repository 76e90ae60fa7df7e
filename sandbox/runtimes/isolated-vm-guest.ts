import { GuestError, type GuestJs, type GuestRunOptions } from '../../plugins/kit/guest-js.ts';
import { guestTimeoutMs } from './guest-timeout.ts';

/** The subset of isolated-vm (>= 6.2.0) used here; the package is optional, so no type import. */
interface IvmModule {
  Isolate: new (options: { memoryLimit: number }) => IvmIsolate;
  ExternalCopy: new (value: unknown) => { copyInto(options?: { release?: boolean }): unknown };
  Callback: new (fn: (...args: unknown[]) => unknown, options?: { ignored?: boolean }) => unknown;
}
interface IvmIsolate {
  readonly isDisposed: boolean;
  createContext(): Promise<IvmContext>;
  compileScript(code: string, options?: { filename?: string }): Promise<{ run(context: IvmContext, options: object): Promise<unknown> }>;
  dispose(): void;
}
interface IvmContext {
  global: { set(key: string, value: unknown): Promise<boolean> };
  evalClosure(code: string, args: unknown[], options: object): Promise<unknown>;
}
interface IvmReference {
  apply(receiver: undefined, args: unknown[], options: object): Promise<unknown>;
}

/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;

/**
 * Loads isolated-vm and checks its version. Only >= 6.2.0: every earlier release carries
 * GHSA-864f-rcv7-6rh4 (a guest holding an ExternalCopy/Reference can corrupt host memory).
 */
export async function loadIsolatedVm(): Promise<{ ivm: IvmModule; version: string }> {
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const pkg = require('isolated-vm/package.json') as { version: string };
  if (!versionAtLeast(pkg.version, [6, 2, 0])) {
    throw new Error(`isolated-vm ${pkg.version} is older than 6.2.0 (GHSA-864f-rcv7-6rh4); refusing to use it`);
  }
  const ivm = require('isolated-vm') as IvmModule;
  return { ivm, version: pkg.version };
}

export function versionAtLeast(version: string, minimum: [number, number, number]): boolean {
  const parts = version.split(/[.+-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    const a = parts[i] ?? 0;
    const b = minimum[i] as number;
    if (Number.isNaN(a)) return false;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * `ctx.guest` backed by isolated-vm: a fresh isolate per `run` (≈1.3 ms), disposed afterwards.
 * The guest receives only copies (ExternalCopy.copyInto) and plain functions (Callback); its
 * results come back as copies. Async host callbacks settle through a function that lives in the
 * isolate and is held only by the host, so the guest never sees a Reference.
 */
export function createIsolatedVmGuest(ivm: IvmModule, memoryMb: number): GuestJs {
  return { engine: 'isolated-vm', run: (source, options) => runInIsolate(ivm, Math.max(MIN_MEMORY_MB, memoryMb), source, options ?? {}) };
}

const BRIDGE = `
  const start = $0;
  const pending = new Map();
  let next = 0;
  for (const name of $1) {
    const call = (...args) => new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      start(name, id, args);
    });
    Object.defineProperty(globalThis, name, { value: call, enumerable: true });
  }
  return (id, ok, value) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (ok) p.resolve(value); else p.reject(new Error(value));
  };
`;

async function runInIsolate(ivm: IvmModule, memoryMb: number, source: string, options: GuestRunOptions): Promise<unknown> {
  const timeoutMs = guestTimeoutMs(options);
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  let expired = false;
  // `timeout` below bounds the isolate's own CPU; this bounds the wall clock, including waits on
  // host callbacks and promises that never settle. Disposing stops a running isolate at once.
  const timer = setTimeout(() => {
    expired = true;
    if (!isolate.isDisposed) isolate.dispose();
  }, timeoutMs);
  try {
    const context = await isolate.createContext();
    for (const [name, value] of Object.entries(options.globals ?? {})) {
      await context.global.set(name, new ivm.ExternalCopy(value).copyInto({ release: true }));
    }
    const callbacks = options.callbacks ?? {};
    const names = Object.keys(callbacks);
    if (names.length > 0) {
      let settle: IvmReference | null = null;
      const start = new ivm.Callback(
        (name: unknown, id: unknown, args: unknown) => {
          const fn = callbacks[String(name)];
          const reply = (ok: boolean, value: unknown): void => {
            settle?.apply(undefined, [id, ok, value], { arguments: { copy: true } }).catch(() => undefined);
          };
          Promise.resolve()
            .then(() => fn?.(...(Array.isArray(args) ? args : [])))
            .then((value) => reply(true, value), (err: unknown) => reply(false, err instanceof Error ? err.message : String(err)));
        },
        { ignored: true },
      );
      settle = (await context.evalClosure(BRIDGE, [start, new ivm.ExternalCopy(names).copyInto({ release: true })], {
        result: { reference: true },
      })) as IvmReference;
    }
    const script = await isolate.compileScript(source, { filename: 'guest.js' });
    return await script.run(context, { timeout: timeoutMs, promise: true, copy: true });
  } catch (err) {
    throw toGuestError(err, timeoutMs, expired);
  } finally {
    clearTimeout(timer);
    if (!isolate.isDisposed) isolate.dispose();
  }
}

function toGuestError(err: unknown, timeoutMs: number, expired: boolean): GuestError {
  const message = err instanceof Error ? err.message : String(err);
  if (/memory limit/i.test(message)) return new GuestError('memory', `guest code exceeded its memory limit (${message})`);
  if (expired || /timed out/i.test(message)) return new GuestError('timeout', `guest code ran longer than ${timeoutMs} ms`);
  if (/could not be cloned|non-transferable/i.test(message)) return new GuestError('unclonable', `value could not be copied: ${message}`);
  const name = err instanceof Error ? err.name : 'Error';
  return new GuestError('exception', `${name}: ${message}`);
}
