import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import type { UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { PythonCellLoad } from '../sandbox/python-sandbox.ts';
import type { Timeline } from './timeline.ts';

// Seconds. TTFT and tool times span a few ms (cached prefix, calculator) to minutes (long prompts,
// sandboxed scripts); request latency adds the rounds on top.
const SHORT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LONG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

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
  readonly #toolOverlap: Counter;
  readonly #forwarded: Counter;

  /**
   * `replicas`: the upstream's, when it has several; `pythonCells`: the sandbox's load;
   * `admission`: the queue of `maxConcurrentRequests`, when set.
   */
  constructor({ replicas, pythonCells, admission }: { replicas?: UpstreamReplicas; pythonCells?: () => PythonCellLoad; admission?: BoundedQueue } = {}) {
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
      help: 'Calls to gateway tools, by tool and outcome (ok, error, rejected: cut short while being decoded, stopped: the request ended first).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.#toolDuration = new Histogram({
      name: 'conveyor_tool_duration_seconds',
      help: "A tool call's first activity to its result.",
      labelNames: ['tool'],
      buckets: SHORT_BUCKETS,
      registers,
    });
    this.#toolWait = new Histogram({
      name: 'conveyor_tool_wait_after_decode_seconds',
      help: "Per round with tool calls: how long the round still waited for its tools after the model's decode ended (the tool time partial execution did not hide).",
      buckets: SHORT_BUCKETS,
      registers,
    });
    this.#toolOverlap = new Counter({
      name: 'conveyor_tool_overlap_seconds_total',
      help: "Tool time that ran while the model was still decoding (hidden by partial execution).",
      registers,
    });
    this.#forwarded = new Counter({
      name: 'conveyor_forwarded_requests_total',
      help: 'Requests to other /v1 endpoints passed to the upstream (completions, embeddings, …), by the status it answered, or the error code when it answered none.',
      labelNames: ['status'],
      registers,
    });
    if (admission) {
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

  /** A forwarded request got its answer's status line (`200`, `404` …), or failed with an error code before it. */
  forwarded(status: string): void {
    this.#forwarded.inc({ status });
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
    const events = timeline.events;
    const end = timeline.end!;
    this.#requests.inc({ outcome: end.detail ?? 'unknown' });
    this.#duration.observe(end.t / 1000);
    const firstToken = events.find((e) => e.type === 'first-token');
    if (firstToken) this.#ttft.observe(firstToken.t / 1000);

    const tools = new Map<string, { name: string; start: number }>();
    for (const e of events) {
      if (e === end) break;
      if (e.type === 'round-start') this.#rounds.inc();
      else if (e.type === 'tool-start' && e.callId) tools.set(e.callId, { name: e.detail ?? 'unknown', start: e.t });
      else if (e.type === 'tool-end' && e.callId) {
        const call = tools.get(e.callId);
        if (!call) continue;
        this.#toolCalls.inc({ tool: call.name, outcome: e.detail === 'ok' ? 'ok' : 'error' });
        this.#toolDuration.observe({ tool: call.name }, (e.t - call.start) / 1000);
        tools.delete(e.callId);
      } else if (e.type === 'abort' && e.callId && e.detail?.startsWith('rejected')) {
        const call = tools.get(e.callId);
        if (call) this.#toolCalls.inc({ tool: call.name, outcome: 'rejected' });
        tools.delete(e.callId);
      }
    }
    // Calls the request's end stopped (the client left, the upstream failed, a shutdown cut it):
    // their own end, if any, comes after request-end, and they are counted once, here.
    for (const call of tools.values()) this.#toolCalls.inc({ tool: call.name, outcome: 'stopped' });
    for (const round of timeline.rounds()) {
      if (round.toolMs === 0) continue;
      this.#toolWait.observe(round.toolWaitAfterDecodeMs / 1000);
      this.#toolOverlap.inc(Math.max(0, round.toolMs - round.toolWaitAfterDecodeMs) / 1000);
    }
  }
}

/** Read from the replica set when scraped; counters advance by what changed since the last scrape. */
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
    help: '1 while a replica takes requests, 0 while it rests after failures.',
    labelNames,
    registers,
    collect() {
      for (const r of replicas.states()) this.set({ replica: r.baseUrl }, r.healthy ? 1 : 0);
    },
  });
  for (const [field, name, help] of [
    ['accepted', 'conveyor_upstream_replica_accepted_total', 'Streams each replica accepted.'],
    ['failures', 'conveyor_upstream_replica_failures_total', 'Failures counted against each replica (it rested after each).'],
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
          if (delta > 0) this.inc({ replica: r.baseUrl }, delta);
          seen.set(r.baseUrl, r[field]);
        }
      },
    });
  }
}
