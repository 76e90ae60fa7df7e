/**
 * A Prometheus-style cumulative histogram over seconds. Bucket bounds are vLLM's for the metric
 * it mirrors, so dashboards built for vLLM read the simulator unchanged.
 */
export class LatencyHistogram {
  readonly bounds: readonly number[];
  readonly counts: number[];
  count = 0;
  sum = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = bounds.map(() => 0);
  }

  observe(seconds: number): void {
    this.count += 1;
    this.sum += seconds;
    this.bounds.forEach((bound, i) => {
      if (seconds <= bound) this.counts[i]! += 1;
    });
  }
}

// vLLM v1's buckets (vllm/v1/metrics/loggers.py) for the histograms of the same name.
export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
  160.0, 640.0, 2560.0,
];
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
  1920.0, 7680.0,
];
export const INTER_TOKEN_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
