import { barChart } from './charts/svg-charts.ts';
import type { WorkloadReport } from './run-ab.ts';

/** The paper's Figure 6 for our run: per workload, latency off vs on vs the bound, with std error bars. */
export function workloadsChart(reports: readonly WorkloadReport[]): string {
  return barChart({
    title: 'Latency per workload: partial execution off vs on (Validation: time to detect the invalid call)',
    yLabel: 'ms (mean ± std)',
    groups: reports.map((r) => ({
      label: r.workload,
      bars: [
        { label: 'partial execution off', value: r.off.mean, error: r.off.std },
        { label: 'partial execution on', value: r.on.mean, error: r.on.std },
        { label: 'theoretical bound', value: r.boundMs },
      ],
    })),
  });
}
