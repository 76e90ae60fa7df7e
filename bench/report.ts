import type { SectionResult } from './extra-sections.ts';
import { fractionPercent, percent } from './percent-format.ts';
import type { Provenance } from './provenance.ts';
import { jsonText, writeResultFiles } from './result-files.ts';
import type { WorkloadReport } from './run-ab.ts';
import type { ToolProfile } from './tool-profiles/tool-profiles.ts';
import { workloadTimelinesChart, workloadsChart } from './workloads-chart.ts';
import { fixedDigits } from './fixed-digits.ts';

export interface BenchMeta extends Provenance {
  command: string;
  date: string;
  node: string;
  profile: string;
  toolProfile: ToolProfile;
  upstream: string;
  pairs: string;
  /** On/off pairs each workload sent before its measured runs, in no figure. */
  warmupPairs: number;
  workloads: string;
  python: string;
  search: string;
  sandbox: unknown;
}

export interface BenchRun {
  /** Every run's, whatever parts it ran: its command, commit, CPUs and load at the end. */
  origin: Provenance & { command: string };
  meta?: BenchMeta;
  reports: WorkloadReport[];
  sections: SectionResult[];
  wallS: number;
  /** `--quick`: a smoke test, whose numbers the report says not to quote. */
  quick?: boolean;
  /** Parts that failed (a section, the workloads), with their error; the rest of the run still reports. */
  failures?: Array<{ part: string; message: string }>;
  /** Stopped by a signal (Ctrl-C): what had finished is written, the part then running is not. */
  interrupted?: { signal: string; during: string };
}

const ms = (v: number) => fixedDigits(v, 1);
/** A standard deviation, or "–" where one run cannot have one. */
const spread = (std: number, runs: number) => (runs > 1 ? ms(std) : '–');

/** The Markdown summary printed at the end and saved next to the JSON. */
export function markdownReport(run: BenchRun): string {
  const { origin } = run;
  const lines = [
    `# Conveyor benchmark — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `Command: \`${origin.command}\`  `,
    `Commit ${origin.commit}; ${origin.cpus}, load average at the end ${origin.loadavg.join(' / ')}`,
    '',
  ];
  if (run.quick) lines.push('**`--quick`: a smoke test (two runs per mode, no warm-up, short sections). Its numbers show that everything runs, not how fast: do not quote them.**', '');
  if (run.interrupted) {
    lines.push(`**Interrupted (${run.interrupted.signal}) during ${run.interrupted.during}: only the parts below had finished; ${run.interrupted.during} and what was to follow did not.**`, '');
  }
  for (const f of run.failures ?? []) lines.push(`**${f.part} failed:** ${f.message}`, '');
  // Every workload failed: the lines above say why, and a table of no rows would say nothing.
  if (run.meta && run.reports.length > 0) lines.push(...workloadsTable(run.meta, run.reports));
  // A section's report is a whole document on its own (`# Gateway overhead`): one level down here,
  // so the run's file has one title and each section is a chapter of it.
  for (const section of run.sections) lines.push(section.markdown.trim().replace(/^(#{1,5}) /gm, '#$1 '), '', `(${section.name}: ${section.wallS.toFixed(0)} s)`, '');
  lines.push(`Whole run: ${run.wallS.toFixed(0)} s.`, '');
  return lines.join('\n');
}

function workloadsTable(meta: BenchMeta, reports: WorkloadReport[]): string[] {
  const lines = [
    '## Workloads (the paper\'s six)',
    '',
    `Node ${meta.node}; upstream: ${meta.upstream}; decode profile: ${meta.profile}; tool profile: ${meta.toolProfile.name} (${meta.toolProfile.description})  `,
    ...setUps(meta),
    `pairs: ${meta.pairs}; workloads: ${meta.workloads}`,
    '',
    '| workload | runs | off mean ± std (ms) | on mean ± std (ms) | off p50 / p99 (ms) | on p50 / p99 (ms) | improvement | g_i (ms) | t_i (ms) | bound (ms) | bound / on | failed tool calls |',
    '|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|',
  ];
  for (const r of reports) {
    const name = r.metric === 'detection' ? `${r.workload} (time to detect)` : r.workload;
    lines.push(
      `| ${name} | ${r.runs} | ${ms(r.off.mean)} ± ${spread(r.off.std, r.runs)} | ${ms(r.on.mean)} ± ${spread(r.on.std, r.runs)} | ${ms(r.off.p50)} / ${ms(r.off.p99)} | ${ms(r.on.p50)} / ${ms(r.on.p99)} | ` +
        `${percent(r.improvementPct)} | ${r.generationMs.map(ms).join(', ')} | ${r.toolMs.map(ms).join(', ') || '–'} | ${ms(r.boundMs)} | ${fractionPercent(r.boundAchieved)} | ${r.failedCalls} |`,
    );
  }
  const failing = reports.filter((r) => r.failedCalls > 0);
  if (failing.length) {
    lines.push('', ...failing.map((r) => `**Warning: ${r.workload}: ${r.failedCalls} tool call(s) failed** (a timeout or a crash, see its timeline): its times measure the failure, not the tool's work.`));
  }
  const shapes = reports.filter((r) => r.otherShapes);
  if (shapes.length) {
    // Per mode, as the table's runs column counts them: "3 of 20 runs" beside "runs 10" read as if
    // 3 of 10 had; and only the off runs' shapes bear on t_i.
    const ofMode = (r: WorkloadReport, mode: 'off' | 'on') => {
      const runs = r.records.filter((x) => x.mode === mode);
      return `${runs.filter((x) => x.rounds.length !== r.generationMs.length).length} of ${runs.length} ${mode} runs`;
    };
    lines.push(
      '',
      ...shapes.map(
        (r) =>
          `**Note: ${r.workload}: ${ofMode(r, 'off')} and ${ofMode(r, 'on')} took another number of rounds than ${r.generationMs.length}**: g_i, t_i and the bound are from the others; on, off and improvement from all.`,
      ),
    );
  }
  // g_i of a round fewer runs reached is the mean of those alone: say of how many.
  const partial = reports.filter((r) => r.generationRuns?.length);
  if (partial.length) {
    lines.push(
      '',
      ...partial.map((r) => {
        const all = (g: { used: number; leftOut: number }) => g.used + g.leftOut;
        const [first, ...rest] = r.generationRuns!;
        const rounds = [`g_i of round ${first!.round} is the mean of ${first!.used} of ${all(first!)} sequential runs`, ...rest.map((g) => `round ${g.round} of ${g.used} of ${all(g)}`)];
        return `**Note: ${r.workload}: ${rounds.join(', ')}**: the others had ended (their rejection detected) before it.`;
      }),
    );
  }
  lines.push(
    '',
    ...(meta.warmupPairs > 0
      ? [`Left out of every figure: ${meta.warmupPairs} warm-up pair${meta.warmupPairs === 1 ? '' : 's'} per workload, sent before the measured runs (JIT, sockets, first tool starts).`]
      : []),
    'off = sequential baseline (tools start after each decode ends); on = partial execution. improvement = (off − on) / off.',
    'g_i = decode time of round i (round start → last token); t_i = tool time of round i (first tool start → last result), from the off runs.',
    'bound = Σ max(g_i, t_i) + g_{n+1} (Conveyor, Xu et al. 2024); bound / on = how close partial execution came to it',
    '(over 100% when a run beat the bound computed from the mean g_i and t_i). p50 / p99: nearest rank; with few runs p99 is the slowest.',
    ...(reports.some((r) => r.metric === 'detection') ? ['Validation: on/off are the times from request start to the rejection; its bound is the moment the invalid field was decoded.'] : []),
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
    '.json': jsonText({
      origin: run.origin,
      meta: run.meta,
      quick: Boolean(run.quick),
      ...(run.interrupted ? { interrupted: run.interrupted } : {}),
      failures: run.failures ?? [],
      reports: run.reports,
      sections: run.sections.map(({ svg: _, ...s }) => s),
      wallS: run.wallS,
    }),
  };
  if (run.reports.length) {
    files['.svg'] = workloadsChart(run.reports);
    files['-timelines.svg'] = workloadTimelinesChart(run.reports);
  }
  for (const s of run.sections) if (s.svg) files[`-${s.name}.svg`] = s.svg;
  return writeResultFiles(dir, name, files);
}

// The Python and search set-ups, where a workload of the run used them: a calculator-only run's
// header named an interpreter and a search API it never touched.
function setUps(meta: BenchMeta): string[] {
  const used = [['python', meta.python], ['search', meta.search]].filter(([, what]) => what !== 'not used');
  return used.length ? [`${used.map(([part, what]) => `${part}: ${what}`).join('; ')}  `] : [];
}
