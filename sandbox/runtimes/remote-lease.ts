import type { PluginProcess } from './plugin-process.ts';

/**
 * How a call let go of its process: `result`, the child answered it (with its process's CPU time
 * so far, if it said); `answered`, the child acknowledged its `abort`; `unanswered`, it did not
 * (or is gone); `unused`, the call was over before its process came, and never ran on it.
 */
export type CallEnding =
  | { kind: 'result'; cpuMs?: number }
  | { kind: 'answered' }
  | { kind: 'unanswered' }
  | { kind: 'unused' };

export interface RemoteLease {
  readonly proc: PluginProcess;
  /**
   * The call is over: kill its process, keep it for the next call (a reusable plugin's, after a
   * result), or leave a shared host (which, after `unanswered`, checks that its loop still turns).
   */
  done(reason: string, ending: CallEnding): void;
  /** Merged into every result of the call (e.g. that an isolate plugin ran in the process fallback). */
  readonly data?: Record<string, unknown>;
}
