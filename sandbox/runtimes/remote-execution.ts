import { ConveyorError } from '../../core/errors.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import { ProgressBudget } from '../../plugins/progress-budget.ts';
import type { ToolCallContext, ToolExecution, ToolResult, Verdict } from '../../plugins/plugin-types.ts';
import { askToAbort } from './abort-answer.ts';
import { CallClock, ON_ABORT_GRACE_MS } from './call-clock.ts';
import { CallOrder } from './call-order.ts';
import { CallTurns } from './call-turns.ts';
import { abortReasonOf, invalidArguments, safeParseOr } from './load-plugin-module.ts';
import type { PluginProcess } from './plugin-process.ts';
import { ON_LOAD_LIMIT_MS, START_ALLOWANCE_MS } from './on-load-limit.ts';
import { describeExit } from './process-exit.ts';
import type { CallMessage } from './plugin-protocol.ts';
import { NO_READY_HINT, NoReadyMessageError, READY_HOW, ReadyDeadline } from './process-start-failure.ts';
import type { RemoteCallOptions } from './remote-call-options.ts';
import type { CallEnding, RemoteLease } from './remote-lease.ts';

// Imported from here by the plugin kit (tool-from-plugin.ts) and its tests.
export type { RemoteLease } from './remote-lease.ts';
export type { RemoteCallOptions } from './remote-call-options.ts';

let wireCounter = 0;

/**
 * One call of a plugin that runs in another process (runtime `process`, or the isolate host).
 * Every way the call can go wrong — queue full, startup failure, crash, limit, timeout, protocol
 * error — ends as a ToolResult with ok:false for this call alone; nothing here throws.
 */
export class RemoteExecution implements ToolExecution {
  private readonly call: ToolCallContext;
  private readonly options: RemoteCallOptions;
  private readonly controller = new AbortController();
  private readonly lease: Promise<RemoteLease | null>;
  private readonly turns = new CallTurns();
  private readonly order: CallOrder;
  private failure: ToolResult | null = null;
  private finished = false;
  /**
   * The child's result is in: nothing it sends for the call after that is heard. The call stays
   * routed until a microtask later (leave()), so progress read in the same chunk as the result
   * reached the request, and progress in a later chunk did not.
   */
  private answered = false;
  /** The call's process, once it has one: killed for an answer out of turn. */
  private proc: PluginProcess | null = null;
  private seq = 0;
  /**
   * The Dispatcher's budget, kept here too: past it the process is told to drop this call's progress
   * lines unread. The event that goes past it is still passed on, for the Dispatcher's note.
   */
  private readonly progress = new ProgressBudget();
  private leaseData: Record<string, unknown> = {};
  /** Unique on the wire: requests' own call ids may repeat, and a shared host serves them all. */
  private readonly wireId: string;
  private readonly clock: CallClock;
  private unstarted: NodeJS.Timeout;
  /** Set while the call waits for the child to answer its `abort` (onAbort finished). */
  private onAborted: (() => void) | null = null;
  /** Takes this call's exit listener off its process. */
  private offExit: () => void = () => undefined;
  /**
   * Settles (with null) when the call finishes. piece() and end() wait for the lease or this:
   * a call aborted or timed out while its process is still starting (a slow cold start, a spare
   * still coming up) ends then, not when the start-up is over.
   */
  private readonly over: Promise<null>;
  private settleOver: (value: null) => void = () => undefined;

  constructor(call: ToolCallContext, options: RemoteCallOptions) {
    this.call = call;
    this.options = options;
    this.order = new CallOrder(options.definition.name);
    this.over = new Promise<null>((resolve) => (this.settleOver = resolve));
    const { definition } = options;
    this.wireId = `${call.callId}#${++wireCounter}`;
    const onAbort = (): void => this.abort('request aborted');
    if (call.signal.aborted) queueMicrotask(onAbort);
    // Taken off the request's signal when this call finishes (its own controller aborts then).
    else call.signal.addEventListener('abort', onAbort, { once: true, signal: this.controller.signal });
    this.clock = new CallClock(options.timeoutMs, () => this.fail(`timed out after ${options.timeoutMs} ms`, 'sandbox_limit_exceeded', 'timeout'));
    const startLimitMs = options.startLimitMs ?? START_ALLOWANCE_MS + ON_LOAD_LIMIT_MS;
    const foundNone = (): void => this.fail(`found no process to run it within ${startLimitMs} ms${options.module ? '' : NO_READY_HINT}`, 'sandbox_limit_exceeded', 'timeout');
    // The start limit does not end the call itself: it ends the wait, and a process start the call
    // waits for fails as at the pool's startupTimeoutMs (ReadyDeadline), with the child's last
    // line. Ended here, that line was lost and the code differed with which timer came first. An
    // acquire that does not answer its abort still ends the call, ON_ABORT_GRACE_MS later.
    this.unstarted = setTimeout(() => {
      this.controller.abort(new ReadyDeadline(startLimitMs));
      this.unstarted = setTimeout(foundNone, ON_ABORT_GRACE_MS);
    }, startLimitMs);
    const pastLimit = (): boolean => this.controller.signal.reason instanceof ReadyDeadline;
    this.lease = options.acquire(this.controller.signal, call.tenant).then(
      (lease) => {
        clearTimeout(this.unstarted);
        // Past the start limit the call no longer hears its request's abort (that listener goes
        // with the controller's): it does not start now.
        if (this.finished || pastLimit()) {
          if (!this.finished) foundNone();
          lease.done('call already over', { kind: 'unused' });
          return null;
        }
        this.leaseData = lease.data ?? {};
        this.proc = lease.proc;
        lease.proc.route(this.wireId, (message) => this.receive(message));
        // Taken off in leave(): a shared host outlives its calls, and would otherwise keep every
        // finished call (and its request's emit) reachable for as long as it runs.
        this.offExit = lease.proc.onceExit((exit) => {
          const { message, limit } = describeExit(exit);
          this.stop(this.errorResult(`stopped: ${message}`, limit ? 'sandbox_limit_exceeded' : 'sandbox_error', limit ?? undefined), `stopped: ${message}`, true);
        });
        lease.proc.send({
          t: 'start',
          callId: this.wireId,
          toolCallId: call.callId,
          plugin: definition.name,
          ...(options.module ? { module: options.module } : {}),
          ...(options.memoryMb ? { memoryMb: options.memoryMb } : {}),
        });
        return lease;
      },
      (err: unknown) => {
        clearTimeout(this.unstarted);
        // `failed: …` as every runtime words a call that could not run (plugins/README.md, Runtimes):
        // `error: <tool> failed: the plugin process did not start: …`, `… failed: the process runtime is busy: …`.
        // A program that never said `ready` (within the pool's startupTimeoutMs or this call's
        // start limit, whichever ended first) is told what it owes.
        const how = err instanceof NoReadyMessageError && !options.module ? `; ${READY_HOW}` : '';
        // At the start limit with no process start to blame (the queue, a busy pool): as before.
        if (!this.finished && pastLimit() && !(err instanceof NoReadyMessageError)) foundNone();
        else if (!this.finished) this.fail(`failed: ${err instanceof Error ? err.message : String(err)}${how}`, err instanceof ConveyorError ? err.code : 'sandbox_error');
        return null;
      },
    );
  }

  async piece(piece: Piece): Promise<Verdict> {
    this.order.piece();
    if (this.finished) return undefined;
    const seq = ++this.seq;
    const lease = await Promise.race([this.lease, this.over]);
    if (!lease || this.finished) return undefined;
    const over = this.clock.work();
    return new Promise<Verdict>((resolve) => {
      this.turns.awaitVerdict(seq, (verdict) => {
        over();
        resolve(verdict);
      });
      lease.proc.send({ t: 'piece', callId: this.wireId, seq, piece });
    });
  }

  async end(rawArgs: Record<string, unknown>): Promise<ToolResult> {
    this.order.end();
    const { definition } = this.options;
    // A schema may throw rather than report an issue (a transform that throws): thrown past end(),
    // the call's clock ran on and fired onAbort as a timeout long after. It fails as a hook's throw.
    const parsed = safeParseOr(definition, rawArgs, (failure) => this.stop(failure, abortReasonOf(definition.name, failure.content)));
    if (!parsed) return this.failure as ToolResult;
    if (!parsed.success) {
      this.fail(invalidArguments(parsed.error), 'invalid_arguments', undefined, 'invalid arguments');
      return this.failure as ToolResult;
    }
    // Every millisecond counts from here, but not before the call has its process.
    const lease = await Promise.race([this.lease, this.over]);
    this.clock.finalStretch();
    if (this.failure || !lease) return this.failure ?? this.errorResult('did not start', 'sandbox_error');
    return new Promise<ToolResult>((resolve) => {
      this.turns.awaitResult(resolve);
      // JS children re-validate (to get the schema's output); other commands get the parsed value.
      const args = (this.options.module ? rawArgs : parsed.data) as Record<string, unknown>;
      lease.proc.send({ t: 'end', callId: this.wireId, args });
    });
  }

  abort(reason: string): void {
    this.stop(this.errorResult(`was aborted: ${reason}`, 'aborted'), reason);
  }

  private receive(message: CallMessage): void {
    if (this.answered) return;
    if ((message.t === 'result' || message.t === 'failed') && message.thrown) {
      this.options.onHookError?.({ ...message.thrown, plugin: this.options.definition.name, runtime: this.options.runtime, callId: this.call.callId });
    }
    switch (message.t) {
      case 'progress':
        if (this.progress.take(message.progress)) this.call.emit(message.progress);
        else this.proc?.quietProgress(this.wireId);
        return;
      case 'verdict': {
        const why = this.turns.verdict(message.seq, message.reject !== undefined ? { verdict: 'reject', reason: message.reject } : undefined);
        return why ? this.outOfTurn(message, why) : undefined;
      }
      case 'result': {
        const waiter = this.turns.takeResult();
        if (!waiter) return this.turns.endSent ? undefined : this.outOfTurn(message, "a result before the call's end was sent: answer each piece with a verdict");
        this.answered = true;
        const data = { ...message.data, ...this.options.data, ...this.leaseData };
        waiter({ ok: message.ok, content: message.content, ...(Object.keys(data).length > 0 ? { data } : {}) });
        // Finished here, not where end() resumes: nothing may end the call another way in between.
        this.finish('call finished', { kind: 'result', ...(message.cpuMs !== undefined ? { cpuMs: message.cpuMs } : {}) });
        return;
      }
      case 'failed': {
        const data = { ...(message.code ? { code: message.code, runtime: this.options.runtime } : {}), ...this.options.data, ...this.leaseData };
        const failure = { ok: false, content: message.content, ...(Object.keys(data).length > 0 ? { data } : {}) };
        this.stop(failure, abortReasonOf(this.options.definition.name, message.content), true);
        return;
      }
      case 'aborted':
        this.onAborted?.();
        return;
    }
  }

  /**
   * An answer to nothing the call awaits (a `result` for a `piece`, a `verdict` for `end`): dropped,
   * the call waited for the answer it was owed until its time limit, which told a plugin's author
   * nothing. A protocol error now, as a message of the wrong shape is: the process is killed, and
   * its exit ends the call. Once the call is over, answers crossing its end are expected, and
   * ignored; so is a shared host's (runtime `isolate`, the gateway's own code, serving other calls).
   */
  private outOfTurn(message: CallMessage, why: string): void {
    if (this.finished || this.options.runtime !== 'process') return;
    this.proc?.kill(`protocol error: ${JSON.stringify(message).slice(0, 200)} (${why})`);
  }

  private fail(message: string, code: string, limit?: string, reason = message): void {
    this.stop(this.errorResult(message, code, limit), reason);
  }

  /**
   * The call ends other than by its result (aborted, rejected, a hook failed, a limit): it ends with
   * `failure` (or the one it already has), and the child's onAbort gets `reason`. `known`: the
   * child has told how the call ended (`failed`) or is gone, so its answer to `abort` is not awaited.
   */
  private stop(failure: ToolResult, reason: string, known = false): void {
    if (this.finished) return;
    this.failure ??= failure;
    this.turns.releaseVerdicts();
    // With `end` out, the child may have finished onEnd and its result be on the wire already: then
    // the call is over for the plugin, and onAbort will not run. The child's answer decides (its
    // result, or `aborted` once onAbort ran; after an abort it sends no result), so exactly one of
    // the two endings happens. Not answering within ON_ABORT_GRACE_MS counts as `aborted`: so a
    // child that cannot answer (its loop blocked) gets its timeout that much after the limit, on
    // purpose, since the gateway cannot tell it from a child about to send its result (README).
    if (known || !this.turns.awaitingResult) this.turns.settleResult(this.failure);
    this.finish(reason);
  }

  private errorResult(message: string, code: string, limit?: string): ToolResult {
    return {
      ok: false,
      content: `error: ${this.options.definition.name} ${message}`,
      data: { code, runtime: this.options.runtime, ...(limit ? { limit } : {}), ...this.options.data, ...this.leaseData },
    };
  }

  /** Ends the call; `answered`: by its result, else the child is sent `abort` and its answer awaited. */
  private finish(reason: string, answered?: CallEnding): void {
    if (this.finished) return;
    this.finished = true;
    this.settleOver(null);
    this.clock.stop();
    clearTimeout(this.unstarted);
    this.controller.abort(reason);
    void this.lease.then((lease) => {
      if (!lease) return;
      if (answered) return this.leave(lease, reason, answered);
      // The process is killed (a shared host leaves the call) once the child has answered its
      // abort, or is taken not to (askToAbort). The call stays routed meanwhile, so progress
      // onAbort emits still reaches the request.
      askToAbort(lease.proc, {
        callId: this.wireId,
        reason,
        hear: (answered) => (this.onAborted = answered),
        release: (ending) => {
          this.onAborted = null;
          this.turns.settleResult(this.failure);
          this.leave(lease, reason, ending);
        },
      });
    });
  }

  /** The call is done with its process (or shared host): unroute it and let the lease go. */
  private leave(lease: RemoteLease, reason: string, ending: CallEnding): void {
    lease.proc.unroute(this.wireId);
    this.offExit();
    lease.done(reason, ending);
  }
}
