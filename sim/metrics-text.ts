import type { EngineLoop } from './engine-loop.ts';
import type { LatencyHistogram } from './latency-histogram.ts';

/** prometheus_client's CONTENT_TYPE_LATEST, which vLLM's /metrics uses. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * GET /metrics in Prometheus text format. vLLM's metric names where one exists (so dashboards and
 * scrapers written for vLLM read the simulator), `sim:` names for what only the simulator knows.
 */
export function renderMetrics(engine: EngineLoop, modelName: string): string {
  const c = engine.counters();
  const stats = engine.stats;
  // vLLM v1's labels on every metric: the served model and the engine's index (one engine here, as
  // vLLM without data parallelism), in that order.
  const label = `model_name="${modelName.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}",engine="0"`;
  const lines: string[] = [];
  const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}{${labels}} ${formatValue(value)}`);
  };
  const histogram = (name: string, help: string, h: LatencyHistogram) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    h.bounds.forEach((bound, i) => lines.push(`${name}_bucket{${label},le="${formatValue(bound)}"} ${formatValue(h.counts[i]!)}`));
    lines.push(`${name}_bucket{${label},le="+Inf"} ${formatValue(h.count)}`);
    lines.push(`${name}_count{${label}} ${formatValue(h.count)}`, `${name}_sum{${label}} ${formatValue(h.sum)}`);
  };

  metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [[label, c.running]]);
  metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [[label, c.waiting]]);
  metric('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', [[label, 0]]);
  metric('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', [[label, c.promptTokens]]);
  metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', [[label, c.prefixCacheQueries]]);
  metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', [[label, c.prefixCacheHits]]);
  metric('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', [[label, c.tokensGenerated]]);
  metric('vllm:request_success_total', 'counter', 'Count of successfully processed requests.', [
    [`${label},finished_reason="stop"`, c.finishedStop],
    [`${label},finished_reason="length"`, c.finishedLength],
    // vLLM v1 counts a request its client left (FinishReason.ABORT) here too.
    [`${label},finished_reason="abort"`, c.abortedSequences],
  ]);
  histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', stats.ttft);
  histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', stats.interTokenLatency);
  histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', stats.e2eLatency);

  metric('sim:steps_total', 'counter', 'Engine steps started.', [[label, c.steps]]);
  metric('sim:prefill_steps_total', 'counter', 'Engine steps that prefilled new sequences.', [[label, c.prefillSteps]]);
  metric('sim:aborted_sequences_total', 'counter', 'Sequences dropped before finishing.', [[label, c.abortedSequences]]);
  metric('sim:batch_occupancy_max', 'gauge', 'Largest number of sequences in one step.', [[label, c.maxBatchOccupancy]]);
  metric('sim:batch_occupancy_mean', 'gauge', 'Mean number of sequences per step.', [[label, c.meanBatchOccupancy]]);
  metric('sim:busy_seconds_total', 'counter', 'Simulated GPU time: sum of step durations.', [[label, c.busyMs / 1000]]);
  metric('sim:schedule_slips_total', 'counter', 'Times the step loop fell a whole step behind and re-anchored.', [[label, c.scheduleSlips]]);
  return `${lines.join('\n')}\n`;
}

// Prometheus' client writes floats; keep integers readable and avoid exponent surprises.
function formatValue(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}
