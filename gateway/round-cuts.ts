import type { UpstreamStream } from '../llm-client/pump-chat-completion.ts';
import type { Timeline } from './timeline.ts';

export interface RoundCutsOptions {
  round: number;
  timeline: Timeline;
  /** onToolReject "error": the request fails on a reject, so its decode is cut at once. */
  rejectFailsRequest: boolean;
  /** parallel_tool_calls: false. */
  oneCall: boolean;
  /** The gateway's maxToolCallsPerRound, when set. */
  maxCallsPerRound: number | undefined;
  /** The round's upstream stream as it is now (a resent round has a new one). */
  stream: () => UpstreamStream;
  /** A client call is being written (its end not yet decoded). */
  clientCallStreaming: () => boolean;
  /** Stops the round's parser where a reject cut the decode (built by then, or nothing to stop). */
  stopParser: () => void;
}

/** The first rejection of a round: the call's tool, its reason, and whether the tool was one the request lacks. */
export interface RoundRejection {
  name: string;
  reason: string;
  undeclared?: boolean;
}

/**
 * Where a round's decode is cut short by the gateway: at a tool's reject verdict, or where the
 * model begins a call past the round's limit. The rest of the round reads what was cut here.
 */
export class RoundCuts {
  rejection: RoundRejection | undefined;
  /** Whether the decode was cut for the rejection (only once a client call it found being written has ended). */
  cutForRejection = false;
  cutAtCallLimit = false;
  /** The upstream's stream is over: nothing is left to cut. */
  decodeOver = false;
  /** The upstream sent the round's finish_reason (or its stream is over): the model wrote all it will. */
  decodeFinished = false;
  /** The most calls the round may have (parallel_tool_calls false: 1), or undefined for no limit. */
  readonly callLimit: number | undefined;
  #rejectionMarked = false;
  #pendingCut: { callId: string; reason: string } | undefined;
  readonly #opts: RoundCutsOptions;

  constructor(opts: RoundCutsOptions) {
    this.#opts = opts;
    this.callLimit = opts.oneCall ? 1 : opts.maxCallsPerRound;
  }

  /** A tool (or the client's validator) rejected a call. */
  reject(call: { callId: string; name: string; undeclared?: boolean }, reason: string): void {
    this.rejection ??= { name: call.name, reason, undeclared: call.undeclared };
    // A verdict that comes while the model writes a client call (a check that took a process or
    // database round trip) waits for that call's end: cut now, the client would be left holding
    // half a call, which an SDK's tool runner runs. The request that fails on a reject is cut at once.
    if (!this.#opts.rejectFailsRequest && this.#opts.clientCallStreaming()) {
      this.#pendingCut ??= { callId: call.callId, reason };
      return;
    }
    this.#cutForReject(call.callId, reason);
  }

  /** A client call's end was decoded: a verdict that waited for it cuts now. */
  clientCallEnded(): void {
    if (this.#pendingCut && !this.decodeOver && !this.#opts.clientCallStreaming()) this.#cutForReject(this.#pendingCut.callId, this.#pendingCut.reason);
  }

  /**
   * parallel_tool_calls: false. vLLM drops the calls after the first once they are decoded; the
   * parser sees the second begin, so its decode is not paid for at all. The gateway's own limit
   * (maxToolCallsPerRound) cuts a model caught in a loop of calls the same way: the calls before
   * it run, and the next round sees their results.
   */
  pastCallLimit(call: { name: string }): void {
    this.cutAtCallLimit = true;
    const { oneCall, round, timeline } = this.#opts;
    const why = oneCall ? 'parallel_tool_calls is false' : `more than ${this.callLimit} tool calls in one round (maxToolCallsPerRound)`;
    timeline.mark('abort', { round, detail: `${why}: cut where ${oneCall ? 'a second call' : `call ${this.callLimit! + 1}`} (${call.name}) began` });
    this.#opts.stream().abort(new Error(why));
  }

  #cutForReject(callId: string, reason: string): void {
    // The first rejection is marked however late it comes: the metrics, the access log and the
    // bench's time to detect count it (without partial execution it always comes after the decode).
    if (!this.#rejectionMarked) this.#opts.timeline.mark('abort', { round: this.#opts.round, callId, detail: `rejected: ${reason}` });
    this.#rejectionMarked = true;
    // A verdict that comes once the model has finished (its finish_reason read, the stream only
    // waiting for its usage and end) has nothing left to cut: cut, the round lost the calls the
    // parser ends only at the decode's end (the upstream's parsed calls, a call at EOS) as "cut
    // short", though the model wrote them whole. The round ends as the model ended it.
    if (this.cutForRejection || this.decodeFinished) return;
    this.cutForRejection = true;
    this.#opts.stopParser();
    this.#opts.stream().abort(new Error(reason));
  }
}
