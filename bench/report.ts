import type { SectionResult } from './extra-sections.ts';
import { jsonText, writeResultFiles } from './result-files.ts';
import type { WorkloadReport } from './run-ab.ts';
import type { ToolProfile } from './tool-profiles/tool-profiles.ts';
import { workloadTimelinesChart, workloadsChart } from './workloads-chart.ts';

export interface BenchMeta {
  command: string;
  date: string;
  node: string;
  profile: string;
  toolProfile: ToolProfile;
  upstream: string;
  pairs: string;
  workloads: string;
  python: string;
  search: string;
  sandbox: unknown;
}

export interface BenchRun {
  meta?: BenchMeta;
  reports: WorkloadReport[];
  sections: SectionResult[];
  wallS: number;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');

/** The Markdown summary printed at the end and saved next to the JSON. */
export function markdownReport(run: BenchRun): string {
  const lines = [`# Conveyor benchmark — ${new Date().toISOString().slice(0, 10)}`, ''];
  if (run.meta) lines.push(...workloadsTable(run.meta, run.reports));
  for (const section of run.sections) lines.push(section.markdown.trim(), '', `(${section.name}: ${section.wallS.toFixed(0)} s)`, '');
  lines.push(`Whole run: ${run.wallS.toFixed(0)} s.`, '');
  return lines.join('\n');
}

function workloadsTable(meta: BenchMeta, reports: WorkloadReport[]): string[] {
  const lines = [
    '## Workloads (the paper\'s six)',
    '',
    `Command: \`${meta.command}\`  `,
    `Node ${meta.node}; upstream: ${meta.upstream}; decode profile: ${meta.profile}; tool profile: ${meta.toolProfile.name} (${meta.toolProfile.description})  `,
    `python: ${meta.python}; search: ${meta.search}  `,
    `pairs: ${meta.pairs}; workloads: ${meta.workloads}`,
    '',
    '| workload | runs | off mean ± std (ms) | on mean ± std (ms) | on p50 / p99 | off p50 / p99 | improvement | g_i (ms) | t_i (ms) | bound (ms) | bound / on |',
    '|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|',
  ];
  for (const r of reports) {
    const name = r.metric === 'detection' ? `${r.workload} (time to detect)` : r.workload;
    lines.push(
      `| ${name} | ${r.runs} | ${ms(r.off.mean)} ± ${ms(r.off.std)} | ${ms(r.on.mean)} ± ${ms(r.on.std)} | ${ms(r.on.p50)} / ${ms(r.on.p99)} | ${ms(r.off.p50)} / ${ms(r.off.p99)} | ` +
        `${r.improvementPct.toFixed(1)}% | ${r.generationMs.map(ms).join(', ')} | ${r.toolMs.map(ms).join(', ') || '–'} | ${ms(r.boundMs)} | ${(r.boundAchieved * 100).toFixed(1)}% |`,
    );
  }
  lines.push(
    '',
    'off = sequential baseline (tools start after each decode ends); on = partial execution. improvement = (off − on) / off.',
    'g_i = decode time of round i (round start → last token); t_i = tool time of round i (first tool start → last result), from the off runs.',
    'bound = Σ max(g_i, t_i) + g_{n+1} (Conveyor, Xu et al. 2024); bound / on = how close partial execution came to it.',
    'Validation: on/off are the times from request start to the rejection; its bound is the moment the invalid field was decoded.',
    '',
  );
  return lines;
}

/**
 * Writes `<date>-<name>.{md,json}`, the workloads chart as `<date>-<name>.svg` and their median
 * requests' timelines as `<date>-<name>-timelines.svg`, and each section's chart beside them.
 */
export function writeBenchFiles(dir: string, name: string, run: BenchRun & { markdown: string }): string[] {
  const files: Record<string, string> = {
    '.md': run.markdown,
    '.json': jsonText({ meta: run.meta, reports: run.reports, sections: run.sections.map(({ svg: _, ...s }) => s), wallS: run.wallS }),
  };
  if (run.reports.length) {
    files['.svg'] = workloadsChart(run.reports);
    files['-timelines.svg'] = workloadTimelinesChart(run.reports);
  }
  for (const s of run.sections) if (s.svg) files[`-${s.name}.svg`] = s.svg;
  return writeResultFiles(dir, name, files);
}
