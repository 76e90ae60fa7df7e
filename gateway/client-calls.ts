export interface ClientToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type Emit = (
  event: { type: 'client-call-start'; index: number; callId: string; name: string } | { type: 'client-call-args'; index: number; text: string },
) => void;

interface Pending {
  index: number;
  name: string;
  argsText: string;
  sawArgs: boolean;
  done: boolean;
  malformed: boolean;
  rejected?: string;
  /** Top-level fields decoded so far: what the history shows of a call rejected before its end. */
  decodedFields: Record<string, unknown>;
}

/**
 * Calls to tools the gateway has no plugin for: the client executes them. Their arguments go
 * out as the model's raw text, fragment by fragment (never re-serialised mid-stream), so the
 * concatenated `tool_calls[].function.arguments` deltas equal the final arguments exactly.
 */
export class ClientCalls {
  private readonly emit: Emit;
  private readonly calls = new Map<string, Pending>();
  constructor(emit: Emit) {
    this.emit = emit;
  }

  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  start(callId: string, name: string): void {
    const index = this.calls.size;
    this.calls.set(callId, { index, name, argsText: '', sawArgs: false, done: false, malformed: false, decodedFields: {} });
    this.emit({ type: 'client-call-start', index, callId, name });
  }

  args(callId: string, text: string): void {
    const call = this.calls.get(callId);
    if (!call || call.done) return;
    call.sawArgs = true;
    call.argsText += text;
    this.emit({ type: 'client-call-args', index: call.index, text });
  }

  end(callId: string, args: Record<string, unknown>): void {
    const call = this.calls.get(callId);
    if (!call) return;
    // Formats without raw argument text (code fences) still owe the client one arguments delta.
    if (!call.sawArgs) this.args(callId, JSON.stringify(args));
    call.done = true;
  }

  /** A closed field of the call's arguments (its top-level ones are kept for a rejected call's history). */
  field(callId: string, path: ReadonlyArray<string | number>, value: unknown): void {
    const call = this.calls.get(callId);
    if (call && path.length === 1) call.decodedFields[String(path[0])] = value;
  }

  name(callId: string): string | undefined {
    return this.calls.get(callId)?.name;
  }

  /** Early validation failed: the call is not the client's to run; the model hears why instead. */
  reject(callId: string, reason: string): void {
    const call = this.calls.get(callId);
    if (call) call.rejected ??= reason;
  }

  /** Calls early validation refused, with the fields the model wrote before the bad one (as a rejected gateway call keeps them). */
  rejected(): Array<{ callId: string; name: string; reason: string; args: Record<string, unknown> }> {
    return [...this.calls.entries()].flatMap(([callId, c]) => (c.rejected ? [{ callId, name: c.name, reason: c.rejected, args: c.decodedFields }] : []));
  }

  malformed(callId: string): void {
    const call = this.calls.get(callId);
    if (call) call.malformed = true;
  }

  /** The calls that completed validly, in the order the model made them. */
  completed(): ClientToolCall[] {
    return [...this.calls.entries()]
      .filter(([, c]) => c.done && !c.malformed && !c.rejected)
      .map(([id, c]) => ({ id, type: 'function' as const, function: { name: c.name, arguments: c.argsText } }));
  }
}
