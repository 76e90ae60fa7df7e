import { cdfChart } from '../charts/svg-charts.ts';
import type { PhaseRun } from './run-phase.ts';

export interface CdfSeries {
  label: string;
  /** Latencies of the completed requests, sorted; a failed one has none to draw. */
  values: number[];
  /** Requests of this rate and mode that failed: left out of values, counted in the label. */
  failed: number;
}

const TITLE = 'End-to-end latency under load, partial execution on vs off';

/**
 * The load chart, one series per rate and mode. A failed request has no latency and is not drawn,
 * so the legend counts them and the title says they are left out: a series missing some looked as
 * whole as the others, the table's done / sent column the only place that told. "(3 of 48 failed)"
 * is short enough to fit the legend's width uncut.
 */
export function latencyCdf(runs: readonly PhaseRun[]): { series: CdfSeries[]; svg: string } {
  const series = runs.flatMap((run) =>
    (['off', 'on'] as const).map((mode) => {
      const mine = run.records.filter((r) => r.mode === mode);
      const ok = mine.filter((r) => !r.error);
      const failed = mine.length - ok.length;
      return {
        label: `${run.ratePerS} req/s, ${mode}${failed ? ` (${failed} of ${mine.length} failed)` : ''}`,
        values: ok.map((r) => r.latencyMs).sort((a, b) => a - b),
        failed,
      };
    }),
  );
  const title = series.some((s) => s.failed) ? `${TITLE} (failed requests not drawn)` : TITLE;
  return { series, svg: cdfChart({ title, xLabel: 'latency (ms)', series }) };
}
