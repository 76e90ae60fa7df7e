import { ON_ABORT_GRACE_MS } from './call-clock.ts';
import type { PluginProcess } from './plugin-process.ts';
import type { CallEnding } from './remote-lease.ts';

export interface AbortAnswerOptions {
  callId: string;
  reason: string;
  /** Takes the function to call when the child answers `aborted` (before anything can release). */
  hear(answered: () => void): void;
  /** Called once, with how the child answered. */
  release(ending: CallEnding): void;
}

/**
 * Sends a call its `abort`. The child runs onAbort (and aborts ctx.signal) and answers `aborted`;
 * the call is released on that answer, when the process ends, or after ON_ABORT_GRACE_MS,
 * whichever comes first.
 */
export function askToAbort(proc: PluginProcess, options: AbortAnswerOptions): void {
  let off: () => void = () => undefined;
  let released = false;
  const release = (ending: CallEnding): void => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    off();
    options.release(ending);
  };
  const timer = setTimeout(() => release({ kind: 'unanswered' }), ON_ABORT_GRACE_MS);
  options.hear(() => release({ kind: 'answered' }));
  off = proc.onceExit(() => release({ kind: 'unanswered' }));
  proc.send({ t: 'abort', callId: options.callId, reason: options.reason });
}
