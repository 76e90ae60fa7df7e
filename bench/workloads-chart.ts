import { barChart } from './charts/svg-charts.ts';
import { timelineChart } from './charts/timeline-chart.ts';
import type { WorkloadReport } from './run-ab.ts';

/** The paper's Figure 6 for our run: per workload, latency off vs on vs the bound, with std error bars. */
export function workloadsChart(reports: readonly WorkloadReport[]): string {
  // Named only where such a workload ran: a calculator-only chart's title spoke of validation.
  const detection = reports.filter((r) => r.metric === 'detection').map((r) => r.workload);
  return barChart({
    title: `Latency per workload, partial execution off vs on${detection.length ? ` (${detection.join(', ')}: time to detect)` : ''}`,
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

/** The paper's Figures 4 and 7 for our run: each workload's median request, off above on. */
export function workloadTimelinesChart(reports: readonly WorkloadReport[]): string {
  return timelineChart({
    title: 'Where the time goes: the median request of each workload, partial execution off and on',
    panels: reports.map((r) => ({
      label: r.workload,
      requests: [
        { label: 'off (sequential)', events: r.examples.off },
        { label: 'on (partial)', events: r.examples.on },
      ],
    })),
  });
}
