import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkloadReport } from './run-ab.ts';

export interface BenchMeta {
  command: string;
  date: string;
  node: string;
  profile: string;
  upstream: string;
  python: string;
  sandbox: unknown;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');

/** The Markdown summary printed at the end and saved next to the JSON. */
export function markdownReport(meta: BenchMeta, reports: WorkloadReport[]): string {
  const lines = [
    `# Conveyor benchmark — ${meta.date}`,
    '',
    `Command: \`${meta.command}\`  `,
    `Node ${meta.node}; upstream: ${meta.upstream}; profile: ${meta.profile}; python: ${meta.python}`,
    '',
    '| workload | runs | off mean ± std (ms) | on mean ± std (ms) | on p50 / p99 | improvement | g_i (ms) | t_i (ms) | bound (ms) | bound / on |',
    '|---|---:|---:|---:|---:|---:|---|---|---:|---:|',
  ];
  for (const r of reports) {
    lines.push(
      `| ${r.workload} | ${r.runs} | ${ms(r.off.mean)} ± ${ms(r.off.std)} | ${ms(r.on.mean)} ± ${ms(r.on.std)} | ${ms(r.on.p50)} / ${ms(r.on.p99)} | ` +
        `${r.improvementPct.toFixed(1)}% | ${r.generationMs.map(ms).join(', ')} | ${r.toolMs.map(ms).join(', ')} | ${ms(r.boundMs)} | ${(r.boundAchieved * 100).toFixed(1)}% |`,
    );
  }
  lines.push(
    '',
    'off = sequential baseline (tools start after each decode ends); on = partial execution.',
    'g_i = decode time of round i (round start → last token); t_i = tool time of round i, measured in the off runs.',
    'bound = Σ max(g_i, t_i) + g_{n+1} (Conveyor, Xu et al. 2024); bound / on = how close partial execution came to it.',
    '',
  );
  return lines.join('\n');
}

export function writeResults(dir: string, name: string, meta: BenchMeta, reports: WorkloadReport[]): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `${meta.date.slice(0, 10)}-${name}`);
  const json = `${stem}.json`;
  const md = `${stem}.md`;
  writeFileSync(json, `${JSON.stringify({ meta, reports }, null, 2)}\n`);
  writeFileSync(md, markdownReport(meta, reports));
  return { json, md };
}
