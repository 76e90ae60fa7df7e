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
 * A thrown value as the phrase a tool error quotes (`error: X failed: <this>`): a plain Error's
 * message alone, another class's name with its message (`TypeError: …` says what kind of bug), a
 * thrown string as it is, any other object as JSON (`throw { code: 42 }` read `[object Object]`).
 * Every runtime and the dispatcher use it, so one plugin bug reads the same wherever it ran.
 * Duck-typed: an Error from another realm (node:vm) is one too.
 */
export function thrownMessage(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (typeof e === 'object' && e !== null && typeof e.message === 'string') {
    return typeof e.name !== 'string' || e.name === 'Error' || e.name === '' ? e.message : `${e.name}: ${e.message}`;
  }
  if (typeof err !== 'object' || err === null) return String(err);
  let json: string | undefined;
  try {
    json = JSON.stringify(err);
  } catch {
    // A cycle or a BigInt inside: String() is all there is.
  }
  if (json === undefined) return String(err);
  return json.length > 500 ? `${json.slice(0, 500)}…` : json;
}
