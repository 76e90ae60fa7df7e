import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import type { UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { PythonCellLoad } from '../sandbox/python-sandbox.ts';
import type { Timeline, TimelineEvent } from './timeline.ts';

// Seconds. TTFT and tool times span a few ms (cached prefix, calculator) to minutes (long prompts,
// a queue, sandboxed scripts); a request adds up to 64 rounds on top (vLLM's end-to-end histogram
// reaches 7,680 s).
const SHORT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const LONG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];

/** How a tool call ended, as `conveyor_tool_calls_total` counts it. */
const TOOL_OUTCOMES = ['ok', 'error', 'rejected', 'cancelled', 'stopped'] as const;
type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** The request outcomes that are not errors (ChatCompletion finish reasons and the gateway's own), present from the first scrape. */
const ANSWER_OUTCOMES = ['answer', 'length', 'max_tool_rounds', 'client_tool_calls'];

/**
 * Node's process metrics, once per process: collectDefaultMetrics installs a GC observer and an
 * event-loop monitor that nothing removes, so every gateway in the process shares them.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The gateway's Prometheus metrics (GET /metrics), one registry per gateway plus the process's. Request and tool
 * figures are read from each request's timeline once it has ended, never on the per-token path.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #inFlight: Gauge;
  readonly #requests: Counter;
  readonly #duration: Histogram;
  readonly #ttft: Histogram;
  readonly #rounds: Counter;
  readonly #toolCalls: Counter;
  readonly #toolDuration: Histogram;
  readonly #toolWait: Histogram;
  readonly #forwarded: Counter;
  readonly #tokens: Counter;
  readonly #queueWait: Histogram | undefined;

  /**
   * `replicas`: the upstream's, when it has several; `pythonCells`: the sandbox's load;
   * `admission`: the queue of `maxConcurrentRequests`, when set; `toolNames`: the gateway's
   * tools, whose series exist (at 0) from the first scrape, so a rate over them is 0, not empty.
   */
  constructor({
    replicas,
    pythonCells,
    admission,
    toolNames = [],
  }: { replicas?: UpstreamReplicas; pythonCells?: () => PythonCellLoad; admission?: BoundedQueue; toolNames?: Iterable<string> } = {}) {
    const registers = [this.registry];
    processMetrics();
    this.#inFlight = new Gauge({ name: 'conveyor_requests_in_flight', help: 'Chat completion requests being answered.', registers });
    this.#requests = new Counter({
      name: 'conveyor_requests_total',
      help: 'Chat completion requests answered, by outcome: the stop reason (answer, length, max_tool_rounds, client_tool_calls) or the error code.',
      labelNames: ['outcome'],
      registers,
    });
    this.#duration = new Histogram({ name: 'conveyor_request_duration_seconds', help: 'Request received to its last byte, all rounds.', buckets: LONG_BUCKETS, registers });
    this.#ttft = new Histogram({ name: 'conveyor_time_to_first_token_seconds', help: "Request received to the model's first token.", buckets: SHORT_BUCKETS, registers });
    this.#rounds = new Counter({ name: 'conveyor_rounds_total', help: 'Model rounds (one upstream decode each) over all requests.', registers });
    this.#toolCalls = new Counter({
      name: 'conveyor_tool_calls_total',
      help:
        'Calls to gateway tools, by tool and outcome (ok, error; rejected: refused while being decoded; cancelled: the call was malformed ' +
        'or cut by the token limit, so never made; stopped: the request ended first).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.#toolDuration = new Histogram({
      name: 'conveyor_tool_duration_seconds',
      help:
        'Per tool call that answered (ok or error): from the moment its tool had the whole call (the model finished writing it; ' +
        'without partial execution, the decode ended) to its result: the latency the tool added after the call was written.',
      labelNames: ['tool'],
      buckets: SHORT_BUCKETS,
      registers,
    });
    this.#toolWait = new Histogram({
      name: 'conveyor_tool_wait_after_decode_seconds',
      help: "Per round that ran gateway tools and reached its end: how long it still waited for its tools after the model's decode ended (the tool time partial execution did not hide; 0 when it hid all of it).",
      buckets: SHORT_BUCKETS,
      registers,
    });
    this.#forwarded = new Counter({
      name: 'conveyor_forwarded_requests_total',
      help:
        'Requests to other /v1 endpoints passed to the upstream (completions, embeddings, …), by the status the client got; ' +
        '`error`: the gateway\'s error code when the upstream gave no answer (connection failure, timeout, busy).',
      labelNames: ['status', 'error'],
      registers,
    });
    this.#tokens = new Counter({
      name: 'conveyor_tokens_total',
      help: 'Tokens of chat completion rounds, as the upstream reported them (kind: prompt, completion); every round of a request counts its prompt.',
      labelNames: ['kind'],
      registers,
    });
    for (const kind of ['prompt', 'completion']) this.#tokens.inc({ kind }, 0);
    for (const outcome of ANSWER_OUTCOMES) this.#requests.inc({ outcome }, 0);
    for (const tool of toolNames) for (const outcome of TOOL_OUTCOMES) this.#toolCalls.inc({ tool, outcome }, 0);
    if (admission) {
      this.#queueWait = new Histogram({
        name: 'conveyor_request_queue_seconds',
        help: 'Per request let in (chat completions and forwarded): how long it waited for one of maxConcurrentRequests places (0 when one was free).',
        buckets: [0, ...SHORT_BUCKETS],
        registers,
      });
      new Gauge({
        name: 'conveyor_requests_queued',
        help: 'Requests (chat completions and forwarded) waiting for one of maxConcurrentRequests places.',
        registers,
        collect() {
          this.set(admission.waiting);
        },
      });
    }
    if (replicas) registerReplicaMetrics(this.registry, replicas);
    if (pythonCells) {
      new Gauge({
        name: 'conveyor_python_cells',
        help: "The Python sandbox's cells (one forked process per python call): open, or waiting for one of maxCells places.",
        labelNames: ['state'],
        registers,
        collect() {
          const load = pythonCells();
          this.set({ state: 'open' }, load.open);
          this.set({ state: 'queued' }, load.queued);
        },
      });
    }
  }

  /** A forwarded request got its answer's status line (`200`, `404` …), or the gateway answered `status` with the error `error` since the upstream gave none. */
  forwarded(status: number, error?: string): void {
    this.#forwarded.inc(error === undefined ? { status } : { status, error });
  }

  /** A request had its place among maxConcurrentRequests after `seconds` in line. */
  admitted(seconds: number): void {
    this.#queueWait?.observe(seconds);
  }

  /** A request refused before it began (bad JSON, a body that fails the schema): counted, not timed. */
  requestRefused(code: string): void {
    this.#requests.inc({ outcome: code });
  }

  /** The Prometheus text for a scrape: this gateway's metrics, then the process's. */
  async render(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
  }

  requestStarted(): void {
    this.#inFlight.inc();
  }

  /** Reads a finished request's timeline (`request-end` marked). */
  requestEnded(timeline: Timeline): void {
    this.#inFlight.dec();
    const end = timeline.end!;
    this.#requests.inc({ outcome: end.detail ?? 'unknown' });
    this.#duration.observe(end.t / 1000);
    this.#tokens.inc({ kind: 'prompt' }, timeline.tokens.prompt);
    this.#tokens.inc({ kind: 'completion' }, timeline.tokens.completion);
    const firstToken = timeline.first('first-token');
    if (firstToken) this.#ttft.observe(firstToken.t / 1000);
    this.#countCalls(timeline, end);
    this.#observeToolWaits(timeline, end);
  }

  /**
   * Every round that ran gateway tools and reached its end (its tools all answered), a 0 included:
   * a round whose tools were done by the decode's end is partial execution's success, and leaving
   * it out would bias the histogram upward. A round cut first (the client left, the upstream
   * failed) waited for no answer.
   */
  #observeToolWaits(timeline: Timeline, end: TimelineEvent): void {
    const withTools = new Set<number>();
    const whole = new Set<number>();
    for (const e of timeline.events) {
      if (e === end) break;
      if (e.round === undefined) continue;
      if (e.type === 'tool-start') withTools.add(e.round);
      else if (e.type === 'round-end') whole.add(e.round);
    }
    if (withTools.size === 0) return;
    for (const round of timeline.rounds()) {
      if (withTools.has(round.round) && whole.has(round.round)) this.#toolWait.observe(round.toolWaitAfterDecodeMs / 1000);
    }
  }

  #countCalls(timeline: Timeline, end: TimelineEvent): void {
    const calls = new Map<string, { name: string; start: number }>();
    // When each call's tool had the whole call: its call-end, or its round's decode-end for one the decode stopped inside.
    const written = new Map<string, number>();
    const decodeEnds = new Map<number, number>();
    // A round counts once however many replicas took it (one that failed before its first token hands it on).
    const rounds = new Set<number | undefined>();
    for (const e of timeline.events) {
      if (e === end) break;
      if (e.type === 'upstream-accepted') rounds.add(e.round);
      else if (e.type === 'call-end' && e.callId) written.set(e.callId, e.t);
      else if (e.type === 'decode-end' && e.round !== undefined) decodeEnds.set(e.round, e.t);
      else if (e.type === 'tool-start' && e.callId) calls.set(e.callId, { name: e.detail ?? 'unknown', start: e.t });
      else if (e.type === 'abort' && e.callId && e.detail?.startsWith('rejected')) {
        const call = calls.get(e.callId);
        if (call) this.#toolCalls.inc({ tool: call.name, outcome: 'rejected' });
        calls.delete(e.callId);
      } else if (e.type === 'tool-end' && e.callId) {
        const call = calls.get(e.callId);
        if (!call) continue;
        calls.delete(e.callId);
        const outcome = toolOutcome(e.detail);
        this.#toolCalls.inc({ tool: call.name, outcome });
        if (outcome !== 'ok' && outcome !== 'error') continue;
        const complete = Math.max(call.start, written.get(e.callId) ?? decodeEnds.get(e.round ?? -1) ?? call.start);
        this.#toolDuration.observe({ tool: call.name }, Math.max(0, e.t - complete) / 1000);
      }
    }
    // Calls the request's end stopped whose end came after it (a tool that took its time to stop).
    for (const call of calls.values()) this.#toolCalls.inc({ tool: call.name, outcome: 'stopped' });
    if (rounds.size > 0) this.#rounds.inc(rounds.size);
  }
}

function toolOutcome(detail: string | undefined): ToolOutcome {
  if (detail === 'ok') return 'ok';
  if (detail === 'aborted') return 'stopped';
  if (detail === 'cancelled') return 'cancelled';
  return 'error';
}

/**
 * Read from the replica set when scraped; counters advance by what changed since the last scrape.
 * Every replica has its series from the first scrape, at 0 (as the tool and outcome series do): a
 * replica's first failure must read as an increase, which `increase()` cannot see in a series that
 * appears with its first sample, and `failures_total` of a replica that never failed must be 0, not absent.
 */
function registerReplicaMetrics(registry: Registry, replicas: UpstreamReplicas): void {
  const registers = [registry];
  const labelNames = ['replica'];
  new Gauge({
    name: 'conveyor_upstream_replica_in_flight',
    help: 'Streams this gateway has open to each upstream replica.',
    labelNames,
    registers,
    collect() {
      for (const r of replicas.states()) this.set({ replica: r.baseUrl }, r.inFlight);
    },
  });
  new Gauge({
    name: 'conveyor_upstream_replica_healthy',
    help: '1 while a replica has no failure since its latest success; 0 while it rests after a failure, and after the rest until a request succeeds on it.',
    labelNames,
    registers,
    collect() {
      for (const r of replicas.states()) this.set({ replica: r.baseUrl }, r.healthy ? 1 : 0);
    },
  });
  for (const [field, name, help] of [
    ['accepted', 'conveyor_upstream_replica_accepted_total', 'Requests each replica served (a chat stream once its first token arrived).'],
    ['failures', 'conveyor_upstream_replica_failures_total', 'Failures counted against each replica (those of one outage, in flight together, rest it once).'],
  ] as const) {
    const seen = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        for (const r of replicas.states()) {
          const delta = r[field] - (seen.get(r.baseUrl) ?? 0);
          if (delta >= 0) this.inc({ replica: r.baseUrl }, delta);
          seen.set(r.baseUrl, r[field]);
        }
      },
    });
  }
}
