import { ConveyorError } from './conveyor-error.ts';

// A tool call that a plugin, its sandbox or its runtime's pool refused or could not finish.

/** A tool's sandbox stopped it: CPU, memory, wall clock, output size. */
export class SandboxLimitError extends ConveyorError {
  readonly limit: string;
  constructor(limit: string, message: string) {
    super('sandbox_limit_exceeded', message);
    this.limit = limit;
  }
}

/** The sandbox process itself failed (crashed, could not start, broke the IPC protocol). */
export class SandboxError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sandbox_error', message, options);
  }
}

/** A plugin runtime's pool has no free slot and its queue is full: the call is refused, not delayed. */
export class SandboxQueueFullError extends ConveyorError {
  readonly runtime: string;
  constructor(runtime: string, message: string) {
    super('sandbox_queue_full', message);
    this.runtime = runtime;
  }

  /** The refusal of a runtime's BoundedQueue. */
  static refusal(runtime: string): (queue: { capacity: number; waiting: number }) => SandboxQueueFullError {
    return (queue) => new SandboxQueueFullError(runtime, `the ${runtime} runtime is busy: ${queue.capacity} running and ${queue.waiting} queued`);
  }
}

/** A plugin rejected a call while it was being decoded. */
export class ToolRejectedError extends ConveyorError {
  readonly tool: string;
  readonly reason: string;
  constructor(tool: string, reason: string, message = `${tool} rejected the call: ${reason}`) {
    super('tool_rejected', message);
    this.tool = tool;
    this.reason = reason;
  }

  /** The model called `tool`, which the request has no tool under: refused by the gateway, not by a tool. */
  static undeclared(tool: string, reason: string): ToolRejectedError {
    return new ToolRejectedError(tool, reason, `the model called a tool this request does not have: ${reason}`);
  }
}

/**
 * Longest thrown message a tool error quotes. A plugin process's `failed` line must stay under the
 * protocol's 8 MiB: a 9 MB message read whole inline and in a thread, but broke the protocol in a
 * process. The model needs the start of it, not a dump.
 */
export const MAX_THROWN_MESSAGE = 10_000;

/**
 * A thrown value as the phrase a tool error quotes (`error: X failed: <this>`): a plain Error's
 * message alone, another class's name with its message (`TypeError: …` says what kind of bug), a
 * thrown string as it is, any other object as JSON (`throw { code: 42 }` read `[object Object]`),
 * a cycle inside it as `"[Circular]"`. Any of them is cut at MAX_THROWN_MESSAGE, saying so. Every runtime and the
 * dispatcher use it, so one plugin bug reads the same wherever it ran.
 * Duck-typed: an Error from another realm (node:vm) is one too.
 */
export function thrownMessage(err: unknown): string {
  const text = phraseOf(err);
  if (text.length <= MAX_THROWN_MESSAGE) return text;
  // Never between a surrogate pair's halves: a lone one in the text the next round sends upstream
  // is refused by a strict UTF-8 encoder (a Python server's tokenizer).
  const keep = /[\uD800-\uDBFF]/.test(text[MAX_THROWN_MESSAGE - 1]!) ? MAX_THROWN_MESSAGE - 1 : MAX_THROWN_MESSAGE;
  return `${text.slice(0, keep)} […; the message was ${text.length} characters, cut at ${MAX_THROWN_MESSAGE}]`;
}

function phraseOf(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (typeof e === 'object' && e !== null && typeof e.message === 'string') {
    return typeof e.name !== 'string' || e.name === 'Error' || e.name === '' ? e.message : `${e.name}: ${e.message}`;
  }
  if (typeof err !== 'object' || err === null) return String(err);
  let json: string | undefined;
  try {
    json = JSON.stringify(err, jsonSafe());
  } catch {
    // A getter or toJSON that throws: String() is all there is.
  }
  // Cut by thrownMessage, at the one limit and saying so, as a message is.
  return json ?? String(err);
}

/**
 * A JSON.stringify replacer for a thrown object that contains itself (JSON.stringify throws on a
 * cycle, and it read `[object Object]`) or a BigInt. Only an object's own ancestors count as a
 * cycle: the same object twice side by side is written twice.
 */
function jsonSafe(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value !== 'object' || value === null) return value;
    // `this` is the object holding `value`: drop the ancestors that are not above it.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}
