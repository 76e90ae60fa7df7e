import { ClientAbortedError, thrownMessage } from '../core/errors.ts';
import { pieceLabel, type Piece } from '../parsers/parser-events.ts';
import type { ToolExecution, ToolPlugin, ToolProgress, ToolResult } from '../plugins/plugin-types.ts';
import { ProgressBudget } from '../plugins/progress-budget.ts';
import { abortQuietly, type CallOutcome, type DispatchedCall } from './dispatched-call.ts';
import { capObservation } from './observation-cap.ts';
import type { Timeline } from './timeline.ts';

export interface DispatcherOptions {
  tools: ReadonlyMap<string, ToolPlugin>;
  /** Off = the sequential baseline: nothing reaches a tool until the round's decode has ended. */
  partialExecution: boolean;
  signal: AbortSignal;
  /** Whose calls these are (ToolCallContext.tenant). */
  tenant?: string;
  timeline: Timeline;
  round: number;
  onProgress: (call: { callId: string; name: string }, progress: ToolProgress) => void;
  /** A tool rejected a piece: the Session cuts the decode short. */
  onReject: (call: { callId: string; name: string }, reason: string) => void;
  /**
   * A call's outcome is in: its text has ended (call-end, or the decode) and its tool has answered.
   * Called once per call not cancelled, before `settle` resolves; it must not throw.
   */
  onResult?: (outcome: CallOutcome) => void;
  /**
   * `on_tool_reject: "error"`: a reject fails the request, so the round's other calls are dropped
   * the moment it comes, and a side-effecting call (`ToolPlugin.sideEffects`) is ended only once
   * the decode is over and every sibling's verdict is in; ended earlier, its effect could happen
   * for a request that then fails without reporting it.
   */
  rejectFailsRequest?: boolean;
  /** A result's content past this many characters, or UTF-8 bytes, loses its middle before the model sees it (capObservation). */
  maxObservationChars?: number;
}

/**
 * Routes one round's parser events to tool executions. The same code path serves partial
 * execution on and off (DESIGN invariant 1): only *when* pieces are delivered differs.
 */
export class Dispatcher {
  private readonly opts: DispatcherOptions;
  private readonly calls: DispatchedCall[] = [];
  private decodeEnded = false;
  readonly #decodeOver: Promise<void>;
  #markDecodeOver!: () => void;

  constructor(opts: DispatcherOptions) {
    this.opts = opts;
    this.#decodeOver = new Promise((resolve) => (this.#markDecodeOver = resolve));
  }

  callStart(callId: string, name: string): void {
    const call: DispatchedCall = { callId, name, plugin: this.opts.tools.get(name), chain: Promise.resolve(), buffered: [], decodedFields: {} };
    this.calls.push(call);
    if (this.opts.partialExecution) this.open(call);
  }

  piece(callId: string, piece: Piece): void {
    const call = this.find(callId);
    if (!call || call.cancelled) return;
    this.opts.timeline.mark('piece', { round: this.opts.round, callId, detail: pieceLabel(piece) });
    if (piece.kind === 'field' && piece.path.length === 1) call.decodedFields[String(piece.path[0])] = piece.value;
    if (this.opts.partialExecution) this.deliver(call, piece);
    else call.buffered.push(piece);
  }

  callEnd(callId: string, args: Record<string, unknown>): void {
    const call = this.find(callId);
    this.opts.timeline.mark('call-end', { round: this.opts.round, callId });
    if (!call) return;
    call.args = args;
    if (this.opts.partialExecution) this.finish(call);
  }

  /** The upstream decode of this round is over: the baseline starts its tools now. */
  endDecode(): void {
    if (this.decodeEnded) return;
    this.decodeEnded = true;
    this.#markDecodeOver();
    for (const call of this.calls) {
      if (call.cancelled) continue;
      if (call.args === undefined) {
        // A call the decode stopped inside: the history keeps what the model did write. (The
        // token limit's truncated calls come as malformed, cancelled above; what is left was cut
        // by a reject, its own or another call's.)
        call.args = call.decodedFields;
        if (call.rejected === undefined) this.drop(call, 'the round was cut short before the model finished writing this call');
      }
      if (this.opts.partialExecution) {
        if (!call.outcome) this.finish(call);
        continue;
      }
      if (call.notRun === undefined) this.open(call);
      for (const piece of call.buffered) this.deliver(call, piece);
      call.buffered = [];
      this.finish(call);
    }
  }

  /**
   * Resolves with every call's outcome, in call order, once all tools have answered; rejects with
   * ClientAbortedError once the request is cancelled (as the session reads any cancelled round;
   * the route tells a client gone from a shutdown by the signal's reason). The tools were told to
   * stop by then, but a raw ToolPlugin that ignores its abort must not hold a request its client
   * has left (and its place under maxConcurrentRequests) for as long as it runs.
   */
  async settle(): Promise<CallOutcome[]> {
    this.endDecode();
    const outcomes = Promise.all(this.calls.filter((c) => !c.cancelled).map((c) => c.outcome!));
    const { signal } = this.opts;
    if (signal.aborted) throw new ClientAbortedError();
    let onAbort!: () => void;
    const cancelled = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(new ClientAbortedError());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([outcomes, cancelled]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The parser declared a started call malformed (its text is released as content): stop the tool
   * and drop the call, so partial work on a call the model never completed leaves no observation.
   */
  cancel(callId: string, reason: string): void {
    const call = this.find(callId);
    if (!call || call.cancelled) return;
    call.cancelled = true;
    abortQuietly(call.execution, reason);
    this.opts.timeline.mark('abort', { round: this.opts.round, callId, detail: `malformed: ${reason}` });
    if (call.toolStarted) this.#markToolEnd(call, 'cancelled');
  }

  /**
   * The request is over (the client left, the upstream or the round failed): every tool stops, and
   * every call still running ends `aborted` now, before the request's end is marked, so a follower
   * of its events (the playground's bars) sees each call end; a result that comes later is dropped.
   */
  abortAll(reason: string): void {
    for (const call of this.calls) {
      // A call whose end waits on a piece's verdict never reaches its end hook: a tool's effect
      // (a mail sent, a row written) must not happen for a request that is over.
      call.notRun ??= reason;
      abortQuietly(call.execution, reason);
      if (call.toolStarted) this.#markToolEnd(call, 'aborted');
    }
  }

  /** The request is failing: every call not yet answered stops (or never starts) with this reason. */
  dropAll(reason: string): void {
    for (const call of this.calls) if (!call.cancelled && call.rejected === undefined) this.drop(call, reason);
  }

  private drop(call: DispatchedCall, reason: string): void {
    call.notRun ??= reason;
    abortQuietly(call.execution, reason);
  }

  private open(call: DispatchedCall): void {
    if (!call.plugin || call.execution) return;
    const { callId, name } = call;
    this.opts.timeline.mark('tool-start', { round: this.opts.round, callId, detail: name });
    call.toolStarted = true;
    const budget = new ProgressBudget();
    // A start hook that throws is the plugin's bug, answered as that call's error like a throwing
    // piece or end hook: thrown on, it failed the whole request (from inside the upstream read).
    try {
      call.execution = this.startExecution(call, call.plugin, budget);
    } catch (err) {
      call.failed = thrownMessage(err);
    }
  }

  private startExecution(call: DispatchedCall, plugin: ToolPlugin, budget: ProgressBudget): ToolExecution {
    const { callId, name } = call;
    return plugin.start({
      callId,
      signal: this.opts.signal,
      ...(this.opts.tenant === undefined ? {} : { tenant: this.opts.tenant }),
      emit: (emitted) => {
        // A call that has ended (its result in, or stopped) has said all it will: progress a tool
        // emits after it (a timer its hook left behind) reached the client after the call's
        // result, or in a later round, or the timeline after the request's end.
        if (call.toolEnded) return;
        const progress = budget.take(emitted);
        if (!progress) return;
        if (progress.type === 'unit-done') {
          this.opts.timeline.mark('unit-done', { round: this.opts.round, callId, detail: progress.detail });
        }
        this.opts.onProgress({ callId, name }, progress);
      },
    });
  }

  private deliver(call: DispatchedCall, piece: Piece): void {
    const { execution, plugin } = call;
    if (!execution || !plugin || (plugin.consumes !== piece.kind)) return;
    call.chain = call.chain.then(async () => {
      if (call.rejected !== undefined || call.failed !== undefined) return;
      let verdict;
      try {
        verdict = await execution.piece(piece);
      } catch (err) {
        // Kept on the call rather than left to reject the chain, which nothing awaits until the
        // call ends: an unhandled rejection would take the whole gateway down.
        call.failed = thrownMessage(err);
        abortQuietly(execution, `failed: ${call.failed}`);
        return;
      }
      if (verdict?.verdict === 'reject') {
        call.rejected = verdict.reason;
        // The call will not end: its tool lets go of what it holds (a sandbox process, a connection).
        abortQuietly(execution, `rejected: ${verdict.reason}`);
        if (this.opts.rejectFailsRequest) this.dropAll(`the request failed: ${call.name} rejected a call`);
        this.opts.onReject({ callId: call.callId, name: call.name }, verdict.reason);
      }
    });
  }

  private finish(call: DispatchedCall): void {
    const args = call.args ?? {};
    const { callId, name } = call;
    const holdEnd = this.opts.rejectFailsRequest === true && call.plugin?.sideEffects === true;
    call.outcome = (holdEnd ? this.#siblingsSettled() : call.chain)
      .then(async (): Promise<ToolResult> => {
        if (!call.plugin) return { ok: false, content: `error: unknown tool "${name}"` };
        if (call.rejected !== undefined) return { ok: false, content: `error: ${name} rejected the call: ${call.rejected}` };
        if (call.failed !== undefined) return { ok: false, content: `error: ${name} failed: ${call.failed}` };
        if (call.notRun !== undefined) return { ok: false, content: `error: ${name} was not run: ${call.notRun}` };
        return call.execution!.end(args);
      })
      .catch((err: unknown): ToolResult => ({ ok: false, content: `error: ${name} failed: ${thrownMessage(err)}` }))
      .then((result) => {
        this.#markToolEnd(call, result.ok ? 'ok' : 'error');
        const max = this.opts.maxObservationChars;
        const outcome = { callId, name, args, result: max === undefined ? result : capObservation(result, max) };
        this.opts.onResult?.(outcome);
        return outcome;
      });
  }

  /**
   * Once the decode is over and every call's delivered pieces have their verdicts. Read after
   * endDecode's loop (a microtask later), so the baseline's buffered pieces are in the chains.
   */
  async #siblingsSettled(): Promise<void> {
    await this.#decodeOver;
    await Promise.all(this.calls.map((c) => c.chain));
  }

  #markToolEnd(call: DispatchedCall, detail: 'ok' | 'error' | 'aborted' | 'cancelled'): void {
    if (call.toolEnded) return;
    call.toolEnded = true;
    this.opts.timeline.mark('tool-end', { round: this.opts.round, callId: call.callId, detail });
  }

  private find(callId: string): DispatchedCall | undefined {
    return this.calls.find((c) => c.callId === callId);
  }
}
