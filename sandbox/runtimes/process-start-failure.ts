import { SandboxError } from '../../core/errors.ts';
import { tellingLine } from './process-exit.ts';

/**
 * A program in another language that never says `ready` (a Python file object on fd 3 written but
 * not flushed) held its calls for the whole start limit, then read as a pool with no free process.
 */
export const READY_HOW =
  'a plugin in another language first writes {"t":"ready","pid":…,"guest":"none"} and a newline to fd 3, and flushes each message (plugins/README.md "Other languages")';
export const NO_READY_HINT = `: its program has not sent its ready message, or every process slot was busy; ${READY_HOW}`;

/**
 * A plugin process that was still running, silent on fd 3, when its start-up time
 * (PluginProcessOptions.startupTimeoutMs) ran out: for a program in another language, most often
 * one that writes its `ready` through a buffer it never flushes (RemoteExecution says so).
 */
export class NoReadyMessageError extends SandboxError {}

/**
 * An abort reason for a start-up: the wait of the call it is for (RemoteCallOptions.startLimitMs)
 * ran out before startupTimeoutMs did. The start-up then fails as at its own timeout (a
 * NoReadyMessageError with the child's last line), so the caller reads the same error whichever
 * of the two timers fired first.
 */
export class ReadyDeadline {
  readonly limitMs: number;
  constructor(limitMs: number) {
    this.limitMs = limitMs;
  }
}

/**
 * The error a failed start-up rejects with. `told`: `why` already quotes what the process printed
 * (an exit's words do); `tail`, the end of what it printed.
 */
export function startFailure(why: string, tail: string, { told = false, noReady = false } = {}): SandboxError {
  // One line, the error's own, for the model's observation; the whole output went to onOutput.
  const said = told ? '' : tellingLine(tail);
  const message = `the plugin process did not start: ${why}${said ? ` (${said})` : ''}${unseenPathHint(tail)}`;
  return noReady ? new NoReadyMessageError(message) : new SandboxError(message);
}

/** A module or file not found at start-up is most often one the sandbox does not show. */
function unseenPathHint(tail: string): string {
  return /ERR_MODULE_NOT_FOUND|Cannot find (module|package)|ENOENT/.test(tail)
    ? '; a sandboxed plugin sees only the repository, Node and the readOnlyPaths it is granted (plugins/README.md)'
    : '';
}
