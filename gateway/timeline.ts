import { performance } from 'node:perf_hooks';

export type TimelineEventType =
  | 'request-start'
  /** The request waited for one of maxConcurrentRequests places and has it now. */
  | 'admitted'
  /** The client's history left out the gateway's tool turns of its last response; they were put back (dropped-tool-turns.ts). */
  | 'history-restored'
  | 'round-start'
  /** The upstream took the round's request; `detail` names it (the replica chosen, when there are several). */
  | 'upstream-accepted'
  | 'first-token'
  /** The client stopped taking events (its socket buffer is full): the upstream is not read until it does. */
  | 'client-paused'
  | 'client-resumed'
  | 'call-start'
  | 'piece'
  | 'tool-start'
  | 'unit-done'
  | 'call-end'
  | 'decode-end'
  | 'tool-end'
  | 'round-end'
  | 'abort'
  | 'error'
  | 'request-end';

export interface TimelineEvent {
  /** Milliseconds since the request started, from the monotonic clock. */
  t: number;
  type: TimelineEventType;
  round?: number;
  callId?: string;
  detail?: string;
}

/**
 * Events a request marks once per token-ish unit (a Python line, a field, a slow reader's pause)
 * rather than once per round or call: past MAX_KEPT_EVENTS a timeline keeps counting them but no
 * longer stores them, so 1,000 kept timelines stay bounded however long or slowly read an answer is.
 * Followers still get each one as it happens.
 */
const REPEATED: ReadonlySet<TimelineEventType> = new Set(['piece', 'unit-done', 'client-paused', 'client-resumed']);
export const MAX_KEPT_EVENTS = 5_000;

/** Per-round figures the benchmark needs: g = decode time, t = tool time (paper's notation). */
export interface RoundSummary {
  round: number;
  /** Round start to the end of the upstream decode. */
  generationMs: number;
  /** Per call: first tool activity (start) to result. Zero when the round had no call. */
  toolMs: number;
  /** How long the round waited for tools after its decode ended: the latency partial execution hides. */
  toolWaitAfterDecodeMs: number;
}

/**
 * The monotonic record of one request. Every step of the Session marks it; the benchmark reads
 * g_i and t_i from it and clients fetch it via GET /v1/requests/:id/timeline.
 */
export class Timeline {
  readonly requestId: string;
  readonly events: TimelineEvent[] = [];
  private readonly origin = performance.now();
  /** Wall-clock start (ms since the epoch), for humans correlating with logs; formatted only when read. */
  private readonly startedAtMs = Date.now();
  /** Followers of this request's events as they happen (GET /v1/requests/:id/events); usually none. */
  private listeners: Array<(event: TimelineEvent) => void> = [];
  #end: TimelineEvent | undefined;
  /** Repeated events not stored, past MAX_KEPT_EVENTS. */
  #dropped = 0;
  /** Tokens the upstream reported, all rounds (a round cut before its usage came counts none). */
  #tokens = { prompt: 0, completion: 0 };

  constructor(requestId: string) {
    this.requestId = requestId;
    this.mark('request-start');
  }

  /** Milliseconds since the request started, as an event marked now has them: the stream's tool events are timed by it too. */
  now(): number {
    return round3(performance.now() - this.origin);
  }

  mark(type: TimelineEventType, fields: Omit<TimelineEvent, 't' | 'type'> = {}): TimelineEvent {
    const event: TimelineEvent = { t: this.now(), type, ...fields };
    if (this.events.length < MAX_KEPT_EVENTS || !REPEATED.has(type)) this.events.push(event);
    else this.#dropped += 1;
    if (type === 'request-end') this.#end ??= event;
    for (const listener of this.listeners) {
      // A follower's failure is its own: the request goes on.
      try {
        listener(event);
      } catch {}
    }
    return event;
  }

  /** `request-end` has been marked. */
  get ended(): boolean {
    return this.#end !== undefined;
  }

  /**
   * The `request-end` event, whose `detail` says how the request ended. Not always the last event:
   * a tool a failing request dropped (an upstream that failed) may report its end after. A call
   * running when the client left ends `aborted` before it (Dispatcher.abortAll), which the
   * playground's bars rely on.
   */
  get end(): TimelineEvent | undefined {
    return this.#end;
  }

  /** Calls `listener` with every event marked from now on, until the returned function is called. */
  subscribe(listener: (event: TimelineEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  first(type: TimelineEventType, round?: number): TimelineEvent | undefined {
    return this.events.find((e) => e.type === type && (round === undefined || e.round === round));
  }

  rounds(): RoundSummary[] {
    const out: RoundSummary[] = [];
    for (const start of this.events.filter((e) => e.type === 'round-start')) {
      const r = start.round!;
      const inRound = this.events.filter((e) => e.round === r);
      const decodeEnd = inRound.find((e) => e.type === 'decode-end')?.t ?? start.t;
      const toolStarts = inRound.filter((e) => e.type === 'tool-start').map((e) => e.t);
      const toolEnds = inRound.filter((e) => e.type === 'tool-end').map((e) => e.t);
      const firstTool = toolStarts.length ? Math.min(...toolStarts) : undefined;
      const lastTool = toolEnds.length ? Math.max(...toolEnds) : undefined;
      out.push({
        round: r,
        generationMs: round3(decodeEnd - start.t),
        toolMs: firstTool !== undefined && lastTool !== undefined ? round3(lastTool - firstTool) : 0,
        toolWaitAfterDecodeMs: lastTool !== undefined ? round3(Math.max(0, lastTool - decodeEnd)) : 0,
      });
    }
    return out;
  }

  /** A round's usage as the upstream reported it (its last report, once per round). */
  addTokens(usage: { prompt_tokens: number; completion_tokens: number }): void {
    this.#tokens.prompt += usage.prompt_tokens;
    this.#tokens.completion += usage.completion_tokens;
  }

  /** Prompt and completion tokens of every round whose usage the upstream reported. */
  get tokens(): { readonly prompt: number; readonly completion: number } {
    return this.#tokens;
  }

  /** Wall-clock start as an ISO 8601 string. */
  get startedAt(): string {
    return new Date(this.startedAtMs).toISOString();
  }

  toJSON() {
    return { id: this.requestId, started_at: this.startedAt, events: this.events, ...(this.#dropped > 0 ? { events_not_kept: this.#dropped } : {}), rounds: this.rounds() };
  }
}

function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
