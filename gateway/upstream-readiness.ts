/**
 * GET /health/ready: whether the gateway can serve a chat completion now, i.e. whether its upstream
 * answers. `/health` stays a liveness check (the process serves HTTP), so an orchestrator that
 * restarts on a failed liveness probe does not restart gateways for an upstream's outage; a load
 * balancer that routes on readiness stops sending them requests that would only fail.
 *
 * Each replica is asked `GET {baseUrl}/models`, the one route every OpenAI-compatible server has
 * (vLLM, SGLang, llama.cpp server): it proves the server is up, speaks the API and takes the key.
 * With `upstream.model` set, that model must be among those listed, since every request names it.
 * Probes run only when asked (the replicas' health stays passive, README "Replicas"): concurrent
 * asks share one probe, and its answer is reused for `cacheMs`, so a fleet of probers cannot turn
 * into load on the upstream.
 */
import { performance } from 'node:perf_hooks';
import { ConveyorError, UpstreamResponseError, UpstreamTotalTimeoutError } from '../core/errors.ts';
import { listModels } from '../llm-client/list-models.ts';
import type { GatewayConfig } from './config.ts';

export interface ReplicaReadiness {
  base_url: string;
  ready: boolean;
  /** How long its `/models` took to answer (or to fail). */
  latency_ms: number;
  /** Why it is not ready: a stable code and a message an operator can act on. */
  error?: { code: string; message: string };
  /** Ready, but it answered 429 (too busy for more now): its status, message and Retry-After. */
  busy?: { status: 429; message: string; retry_after?: string };
}

export interface ReadinessReport {
  /** `ready` when at least one replica is: requests fail over to it. */
  status: 'ready' | 'unavailable';
  /** The model every request is sent as, when the gateway names one. */
  model?: string;
  upstream: ReplicaReadiness[];
}

export interface ReadinessOptions {
  /** How long one probe's answer is reused. */
  cacheMs?: number;
  /** The longest a replica's `/models` may take (or the upstream's own total timeout, if shorter). */
  probeTimeoutMs?: number;
  /** Monotonic milliseconds (tests pass a fake). */
  now?: () => number;
}

export const DEFAULT_READINESS_CACHE_MS = 1000;
export const DEFAULT_READINESS_PROBE_TIMEOUT_MS = 2000;

export class UpstreamReadiness {
  readonly #upstream: GatewayConfig['upstream'];
  readonly #cacheMs: number;
  readonly #probeTimeoutMs: number;
  readonly #now: () => number;
  #last: { report: ReadinessReport; at: number } | undefined;
  #inFlight: Promise<ReadinessReport> | undefined;

  constructor(upstream: GatewayConfig['upstream'], options: ReadinessOptions = {}) {
    this.#upstream = upstream;
    this.#cacheMs = options.cacheMs ?? DEFAULT_READINESS_CACHE_MS;
    const total = upstream.timeouts.totalMs;
    const probe = options.probeTimeoutMs ?? DEFAULT_READINESS_PROBE_TIMEOUT_MS;
    this.#probeTimeoutMs = total === undefined ? probe : Math.min(probe, total);
    this.#now = options.now ?? (() => performance.now());
  }

  /** The latest answer if it is fresh, else the probe running now, else a new probe. */
  check(): Promise<ReadinessReport> {
    if (this.#last && this.#now() - this.#last.at < this.#cacheMs) return Promise.resolve(this.#last.report);
    this.#inFlight ??= this.#probe().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #probe(): Promise<ReadinessReport> {
    const { baseUrl, model } = this.#upstream;
    const urls = typeof baseUrl === 'string' ? [baseUrl] : baseUrl;
    const upstream = await Promise.all(urls.map((url) => this.#probeReplica(url)));
    const report: ReadinessReport = {
      status: upstream.some((r) => r.ready) ? 'ready' : 'unavailable',
      ...(model === undefined ? {} : { model }),
      upstream,
    };
    this.#last = { report, at: this.#now() };
    return report;
  }

  async #probeReplica(baseUrl: string): Promise<ReplicaReadiness> {
    const started = this.#now();
    const { apiKey, timeouts, model } = this.#upstream;
    const latency = (): number => Math.round((this.#now() - started) * 10) / 10;
    try {
      const list = await listModels({ baseUrl, apiKey, timeouts: { ...timeouts, totalMs: this.#probeTimeoutMs } });
      if (model !== undefined && !list.data.some((m) => m.id === model)) {
        const served = list.data.map((m) => m.id).join(', ') || 'none';
        const error = { code: 'model_not_served', message: `the upstream does not serve model '${model}' (it lists: ${served})` };
        return { base_url: baseUrl, ready: false, latency_ms: latency(), error };
      }
      return { base_url: baseUrl, ready: true, latency_ms: latency() };
    } catch (err) {
      // A 429 is a server that is up, speaks the API and took the key, busy for now: ready. Taken
      // out of rotation for it, every gateway in front of one busy vLLM would leave its load
      // balancer at once (clients then turned away without the Retry-After the chat route passes
      // on) and come back with the load, flapping. With `model` set, the list it did not send is
      // checked on the next probe it answers.
      if (err instanceof UpstreamResponseError && err.status === 429) {
        const busy = { status: 429 as const, message: err.message, ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }) };
        return { base_url: baseUrl, ready: true, latency_ms: latency(), busy };
      }
      const error =
        err instanceof UpstreamTotalTimeoutError
          ? { code: err.code, message: `upstream ${baseUrl}/models did not answer within ${this.#probeTimeoutMs} ms` }
          : err instanceof ConveyorError
            ? { code: err.code, message: err.message }
            : { code: 'upstream_connection_error', message: err instanceof Error ? err.message : String(err) };
      return { base_url: baseUrl, ready: false, latency_ms: latency(), error };
    }
  }
}
