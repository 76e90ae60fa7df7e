export interface ClientToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type Emit = (
  event: { type: 'client-call-start'; index: number; callId: string; name: string } | { type: 'client-call-args'; index: number; text: string },
) => void;

interface Pending {
  /** The call's index in the client's `tool_calls`, once the client has been sent its start. */
  index?: number;
  name: string;
  argsText: string;
  sawArgs: boolean;
  done: boolean;
  malformed: boolean;
  rejected?: string;
  /** A call to a tool the request does not have (UndeclaredToolCheck): refused at its start, never sent. */
  undeclared?: boolean;
  /** Top-level fields decoded so far: what the history shows of a call rejected before its end. */
  decodedFields: Record<string, unknown>;
}

export interface ClientCallsOptions {
  /**
   * Send each call only once it is whole and has passed validation (`validate_tool_arguments`),
   * start and arguments together, so that the client never holds a call the gateway then drops.
   * Otherwise calls stream as they are decoded.
   */
  holdUntilValid: boolean;
  /**
   * The next `tool_calls` index, shared by the session's rounds: a call streamed in a round that
   * was then cut and re-prompted keeps its index to itself, and the next round's calls do not
   * merge into it in a client that accumulates deltas by index.
   */
  indices: { next: number };
  /** A call has ended (whole or malformed): the round may cut a decode it held for it (`streaming`). */
  onCallEnded?: () => void;
}

/**
 * Calls to tools the gateway has no plugin for: the client executes them. Their arguments go
 * out as the model's raw text, fragment by fragment (never re-serialised mid-stream), so the
 * concatenated `tool_calls[].function.arguments` deltas equal the final arguments exactly; under
 * validation, all of it once the call has passed (its start, then its whole arguments).
 */
export class ClientCalls {
  private readonly emit: Emit;
  private readonly options: ClientCallsOptions;
  private readonly calls = new Map<string, Pending>();
  constructor(emit: Emit, options: ClientCallsOptions) {
    this.emit = emit;
    this.options = options;
  }

  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  start(callId: string, name: string): void {
    const call: Pending = { name, argsText: '', sawArgs: false, done: false, malformed: false, decodedFields: {} };
    this.calls.set(callId, call);
    if (!this.options.holdUntilValid) this.send(callId, call);
  }

  /**
   * A call to a name the request offers no tool under: kept for the round's history and answered
   * with `reason` like a refused call, never sent to the client.
   */
  startUndeclared(callId: string, name: string, reason: string): void {
    this.calls.set(callId, { name, argsText: '', sawArgs: false, done: false, malformed: false, rejected: reason, undeclared: true, decodedFields: {} });
  }

  args(callId: string, text: string): void {
    const call = this.calls.get(callId);
    if (!call || call.done) return;
    call.sawArgs = true;
    call.argsText += text;
    if (call.index !== undefined) this.emit({ type: 'client-call-args', index: call.index, text });
  }

  end(callId: string, args: Record<string, unknown>): void {
    const call = this.calls.get(callId);
    if (!call) return;
    // Formats without raw argument text (code fences) still owe the client one arguments delta.
    if (!call.sawArgs) this.args(callId, JSON.stringify(args));
    call.done = true;
    if (call.index === undefined && !call.rejected && !call.malformed) {
      this.send(callId, call);
      this.emit({ type: 'client-call-args', index: call.index!, text: call.argsText });
    }
    this.options.onCallEnded?.();
  }
  /** A closed field of the call's arguments (its top-level ones are kept for a rejected call's history). */
  field(callId: string, path: ReadonlyArray<string | number>, value: unknown): void {
    const call = this.calls.get(callId);
    if (call && path.length === 1) call.decodedFields[String(path[0])] = value;
  }

  name(callId: string): string | undefined {
    return this.calls.get(callId)?.name;
  }

  /** Whether early validation refused the call. */
  isRejected(callId: string): boolean {
    return this.calls.get(callId)?.rejected !== undefined;
  }

  /** Early validation failed: the call is not the client's to run; the model hears why instead. */
  reject(callId: string, reason: string): void {
    const call = this.calls.get(callId);
    if (call) call.rejected ??= reason;
  }

  /** Calls early validation refused, with the fields the model wrote before the bad one (as a rejected gateway call keeps them). */
  rejected(): Array<{ callId: string; name: string; reason: string; undeclared: boolean; args: Record<string, unknown> }> {
    return [...this.calls.entries()].flatMap(([callId, c]) => (c.rejected ? [{ callId, name: c.name, reason: c.rejected, undeclared: c.undeclared === true, args: c.decodedFields }] : []));
  }

  malformed(callId: string): void {
    const call = this.calls.get(callId);
    if (!call) return;
    call.malformed = true;
    this.options.onCallEnded?.();
  }

  /** Whether the client has been sent the start of a call that is still being decoded. */
  get streaming(): boolean {
    for (const call of this.calls.values()) if (call.index !== undefined && !call.done && !call.malformed) return true;
    return false;
  }

  /** The calls that completed validly, in the order the model made them. */
  completed(): ClientToolCall[] {
    return [...this.calls.entries()]
      .filter(([, c]) => c.done && !c.malformed && !c.rejected)
      .map(([id, c]) => ({ id, type: 'function' as const, function: { name: c.name, arguments: c.argsText } }));
  }

  private send(callId: string, call: Pending): void {
    call.index = this.options.indices.next++;
    this.emit({ type: 'client-call-start', index: call.index, callId, name: call.name });
  }
}
