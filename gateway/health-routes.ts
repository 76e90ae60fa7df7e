import type { ServerResponse } from 'node:http';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import type { ReplicaState, UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import { sendJson } from './send-json.ts';
import type { UpstreamReadiness } from './upstream-readiness.ts';

export interface HealthSources {
  config: GatewayConfig;
  replicas?: UpstreamReplicas;
  admission?: BoundedQueue;
  toolNames: () => string[];
  /** The caller's own facts (sandbox protections, plugins). */
  extra?: () => Record<string, unknown>;
  readiness: UpstreamReadiness;
}

/**
 * GET /health: liveness, answered from what this process knows, never from the upstream (an
 * upstream outage must not make an orchestrator restart its gateways). GET /health/ready:
 * readiness, which asks the upstream (upstream-readiness.ts).
 */
export function healthRoutes(s: HealthSources): Array<{ method: string; pattern: RegExp; handler: (req: unknown, res: ServerResponse) => void | Promise<void> }> {
  return [
    {
      method: 'GET',
      pattern: /^\/health$/,
      handler: (_req, res) =>
        sendJson(res, 200, {
          status: 'ok',
          upstream: s.config.upstream.baseUrl,
          ...(s.replicas ? { upstream_replicas: s.replicas.states().map(replicaHealth) } : {}),
          partial_execution: s.config.partialExecution,
          ...(s.admission ? { requests: { running: s.admission.active, queued: s.admission.waiting, max_running: s.admission.capacity, max_queued: s.admission.maxWaiting } } : {}),
          tools: s.toolNames(),
          ...s.extra?.(),
        }),
    },
    {
      method: 'GET',
      pattern: /^\/health\/ready$/,
      handler: async (_req, res) => {
        const report = await s.readiness.check();
        sendJson(res, report.status === 'ready' ? 200 : 503, report);
      },
    },
  ];
}

/**
 * snake_case, like the rest of /health. `healthy` only while the replica has no failure since its
 * latest success (`state: "healthy"`); `resting` after a failure, then `probing` once the rest is
 * over and until a request succeeds on it: an alert on `healthy` does not flap back to true for a
 * replica that is still down.
 */
function replicaHealth(r: ReplicaState) {
  return {
    base_url: r.baseUrl,
    state: r.state,
    healthy: r.healthy,
    in_flight: r.inFlight,
    resting_for_ms: r.restingForMs,
    consecutive_failures: r.consecutiveFailures,
    accepted: r.accepted,
    failures: r.failures,
  };
}
