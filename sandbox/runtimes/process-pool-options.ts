import type { SandboxMode } from '../python-launch.ts';

/** How a ProcessPool runs its plugin processes: its limits, its spares, and where it reports what they print. */
export interface ProcessPoolOptions {
  /** 'auto' tries bwrap, then a network+PID namespace (unshare), then none. Default: $CONVEYOR_SANDBOX, else 'auto'. */
  sandbox?: 'auto' | SandboxMode;
  /** Calls running at once (one process each). Default 8. */
  maxProcesses?: number;
  /** Calls waiting for a process; one more gets a tool error at once. Default 32. */
  maxQueue?: number;
  /** Warm processes kept ready per plugin, so a call does not wait for Node to start. Default 1. */
  sparesPerPlugin?: number;
  /** Warm processes kept ready in all. Default 4. */
  maxSpares?: number;
  /** A reusable plugin's processes (ProcessRecipe.reuse) kept between its calls, per plugin. Default 4. */
  maxIdlePerPlugin?: number;
  /** How long such a process waits for its plugin's next call before it is killed. Default 30 s. */
  idleMs?: number;
  /** As root, process n runs as uid uidBase+n (n ≥ 1; uidBase itself for probes and hosts). Default 1_900_000_000. */
  uidBase?: number;
  /**
   * Time to say `ready`: Node's start, the import and a JS plugin's onLoad; a command plugin's
   * whole start-up. A process still silent then is killed, and the call that waited for it fails
   * with `the plugin process did not start: no ready message within N ms (<its last line>)`;
   * one that exits before `ready` fails its call at once. A call waits at most its start limit
   * (START_ALLOWANCE_MS + the onLoad limit) whatever this is; a start still silent then fails in
   * the same words, with that limit's N (ReadyDeadline). Default 30 s + the onLoad limit
   * (on-load-limit.ts).
   */
  startupTimeoutMs?: number;
  /**
   * What a plugin process prints (console.log/error, a stack trace): the sandbox gives a plugin no
   * other way out, so this is how its author debugs it (`conveyor serve` logs it). Default: dropped.
   */
  onOutput?: (output: { plugin: string; text: string }) => void;
  /**
   * A warm spare whose start failed (its program exited or never said `ready`), with the plugin's
   * name and why, in the words a call's `the plugin process did not start: …` error uses. No call
   * sees it (the next call starts a process of its own, and only that one's failure is the
   * call's), so this is the one place it shows: the gateway logs it at warn. The exception is a
   * spare that never said `ready` while a call waited for it: that call fails with its error too.
   * Not called for the spares close() stops. A throw here is dropped. Default: dropped.
   */
  onSpareFailure?: (failure: { plugin: string; reason: string }) => void;
}
