import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/**
 * The servers a benchmark starts (simulators, gateways, peer gateways) are its own child processes:
 * when the benchmark is stopped by a signal (`kill`, `timeout`, a CI step's limit) or dies on an
 * error, they go with it instead of lingering on their ports. SIGKILL alone cannot be caught.
 */
const live = new Set<ChildProcess>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

/** Ends `child` along with this process; it leaves the set when it exits. */
export function reapOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (installed) return;
  installed = true;
  // A last resort on any exit, error paths included: kill() is synchronous, so it works here.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGTERM');
  });
  for (const signal of SIGNALS) {
    process.once(signal, () => {
      for (const c of live) c.kill('SIGTERM');
      // The conventional status of a process ended by that signal.
      process.exit(128 + constants.signals[signal]);
    });
  }
}
