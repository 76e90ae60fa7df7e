import { constants } from 'node:os';

/** How a plugin process ended, in words a tool error can carry. */
export interface ProcessExit {
  /** Set when the gateway killed it (timeout, abort, output limit, protocol error, call done). */
  killedFor: string | null;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderrTail: string;
  /**
   * Its output said it ran out of memory at some point. Kept apart from the tail: after V8's
   * "heap out of memory" line comes a native stack trace whose lines name the node binary's path,
   * and with a long one (a Node from node_modules) the tail no longer held that line.
   */
  outOfMemory?: boolean;
}

/** What a process prints as it runs out of memory: V8's fatal error, malloc's, Python's. */
export const OUT_OF_MEMORY = /heap out of memory|Allocation failed|Cannot allocate|MemoryError|out of memory/i;

/** Why a process is gone, in one line for a tool error, and which limit (if any) stopped it. */
export function describeExit(exit: ProcessExit): { message: string; limit: 'memory' | 'cpu' | 'file-size' | 'output' | null } {
  if (exit.killedFor) return { message: exit.killedFor, limit: /printed more than/.test(exit.killedFor) ? 'output' : null };
  if (exit.outOfMemory || OUT_OF_MEMORY.test(exit.stderrTail)) {
    return { message: 'it ran out of memory (memory limit)', limit: 'memory' };
  }
  // bwrap and unshare exit with 128+N when the plugin process died of signal N.
  const signal = exit.signal ?? (exit.code !== null && exit.code > 128 ? signalName(exit.code - 128) : null);
  if (signal === 'SIGXCPU') return { message: 'it used up its CPU time (CPU limit)', limit: 'cpu' };
  if (signal === 'SIGXFSZ') return { message: 'it wrote a file larger than its file size limit', limit: 'file-size' };
  if (exit.code === 121) return { message: `the sandbox setup failed: ${exit.stderrTail.slice(-300)}`, limit: null };
  const how = signal ? `was killed by ${signal}` : `exited with code ${exit.code}`;
  const said = tellingLine(exit.stderrTail);
  return { message: said ? `it ${how} (${said})` : `it ${how}`, limit: null };
}

/**
 * Why a process ended before it said `ready`, in the words of describeExit without its `it `:
 * `exited with code 1 (<its error line>)`, `was killed by SIGKILL` (bwrap and unshare report a
 * signal as 128+N: under them that read `exited with code 137`), `ran out of memory (memory limit)`.
 */
export function startExitWords(exit: ProcessExit): string {
  return describeExit(exit).message.replace(/^it /, '');
}

/**
 * Lines of a crash report that say nothing of the cause: Node's closing `Node.js vX.Y.Z` banner,
 * which is the last line of every uncaught throw, and stack frames (`at …`, and V8's numbered
 * native and JavaScript frames after an abort).
 */
const NOISE = /^(Node\.js v\d|at |\d+: |-----.*-----$)/;
/** An error's own line: Node's `TypeError: …`, `Error [ERR_X]: …`, a stray rejection's, Python's `ModuleNotFoundError: …`. */
const ERROR_LINE = /^(\w*Error|Error \[\w+\]|UnhandledPromiseRejection)\b/;

/**
 * The line of a process's output that says what went wrong: the last error line (an uncaught
 * throw prints it between the source excerpt and the stack, after whatever the plugin logged),
 * else the last line that is no stack frame or banner; '' if none. Error lines count only
 * unindented: indented ones are an outer error's `cause` or an AggregateError's members.
 */
export function tellingLine(tail: string): string {
  const lines = tail.split('\n').filter((line) => line.trim() !== '' && !NOISE.test(line.trim()));
  const error = lines.filter((line) => ERROR_LINE.test(line)).at(-1);
  return (error ?? lines.at(-1) ?? '').trim().slice(0, 300);
}

function signalName(num: number): NodeJS.Signals | null {
  const entry = Object.entries(constants.signals).find(([, n]) => n === num);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}
