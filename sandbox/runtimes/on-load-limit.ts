import { SandboxLimitError, thrownMessage } from '../../core/errors.ts';

/**
 * How long a plugin's onLoad may take where its calls run (the gateway for `inline`, each worker,
 * each plugin process or isolate host), unless createRuntimePools({ onLoadTimeoutMs }) says
 * otherwise. Past it, the calls that wait for it fail with `onLoad did not finish within N ms`,
 * the same words in every runtime.
 */
export const ON_LOAD_LIMIT_MS = 30_000;

/**
 * How long a call may wait for a worker or a process (the queue, a cold start) beyond its plugin's
 * onLoad. A JS plugin process runs onLoad before it takes a call, and a call on a worker waits for
 * its own plugin's, so the call's own
 * wait ends at this plus the onLoad limit: a hung onLoad is then reported as such, first, rather
 * than as "found no worker" (review 3, finding 6).
 */
export const START_ALLOWANCE_MS = 30_000;

/** The onLoad of the plugin a call waits for did not finish within its limit. */
export class OnLoadLimitError extends SandboxLimitError {
  constructor(limitMs: number) {
    super('onLoad', `onLoad did not finish within ${limitMs} ms`);
  }
}

/**
 * The plugin's onLoad threw: each call waiting for it fails with `onLoad failed: <message>`, which
 * says where to look (an onEnd throw reads `failed: <message>`, and the two were one error).
 */
export class OnLoadFailedError extends Error {
  constructor(cause: unknown) {
    super(`onLoad failed: ${thrownMessage(cause)}`, { cause });
    this.name = 'OnLoadFailedError';
  }
}

const DONE: () => Promise<void> = () => Promise.resolve();

/**
 * Starts onLoad now, once, and returns what each call awaits: onLoad's outcome (a throw as an
 * OnLoadFailedError), or, once `limitMs` have passed with onLoad still running, an
 * OnLoadLimitError at once. The deadline runs from onLoad's start, not from each call's, so a hung
 * onLoad does not make every call wait the whole limit again; an onLoad that finishes late after
 * all serves the calls that come after it.
 */
export function boundedOnLoad(onLoad: (() => void | Promise<void>) | undefined, limitMs: number): () => Promise<void> {
  if (!onLoad) return DONE;
  const running = Promise.resolve()
    .then(onLoad)
    .then(
      () => undefined,
      (err: unknown) => {
        throw new OnLoadFailedError(err);
      },
    );
  let settled: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OnLoadLimitError(limitMs)), limitMs);
  });
  const bounded = Promise.race([running, overdue]);
  // Handled here: a call may never come to await them.
  overdue.catch(() => undefined);
  bounded.catch(() => undefined);
  void running.catch(() => undefined).then(() => {
    clearTimeout(timer);
    settled = running;
  });
  return () => settled ?? bounded;
}
