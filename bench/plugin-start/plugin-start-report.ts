/** The plugin-start bench's Markdown report (bench/plugin-start/run.ts), apart from its processes so it can be tested. */
import { fixedDigits } from '../fixed-digits.ts';
import type { Summary } from '../stats.ts';

export type Loader = 'tsx' | 'type stripping';

export interface StartRow {
  plugin: string;
  loader: Loader;
  wallMs: Summary;
  cpuMs: Summary;
}

export interface ColdRow {
  loader: Loader;
  ms: Summary;
}

export interface PluginStartReport {
  command: string;
  /** ISO time the report was made. */
  at: string;
  node: string;
  cpus: string;
  runs: number;
  loaders: readonly Loader[];
  plugins: readonly string[];
  rows: readonly StartRow[];
  sandbox: string;
  coldRows: readonly ColdRow[];
}

// "–" where there is no figure: processCpuMs is NaN where /proc cannot say, summarize() of no
// values has no p50, and a 0 ms p50 divides by zero; these printed "NaN×", "Infinity×", "NaN / NaN".
const fmt = (v: number) => fixedDigits(v, 0);
const times = (v: number) => {
  const text = fixedDigits(v, 2);
  return text === '–' ? text : `${text}×`;
};

export function pluginStartMarkdown(r: PluginStartReport): string {
  const lines = [
    `# JS plugin process start-up — ${r.at}`,
    '',
    `Command: \`${r.command}\`  `,
    `Node ${r.node}; ${r.cpus}; ${r.runs} starts per row, rows alternating. Spawn → \`ready\` on fd 3 (plugin-host.ts with the plugin module preloaded, as a warm spare does), outside the sandbox. CPU: user + system of the process, all threads, from /proc (10 ms ticks).`,
    '',
    '| plugin module | loader | wall p50 / max (ms) | CPU p50 / max (ms) |',
    '|---|---|---:|---:|',
    ...r.rows.map((row) => `| ${row.plugin} | ${row.loader} | ${fmt(row.wallMs.p50)} / ${fmt(row.wallMs.max)} | ${fmt(row.cpuMs.p50)} / ${fmt(row.cpuMs.max)} |`),
    '',
  ];
  if (r.loaders.length === 2) {
    for (const plugin of r.plugins) {
      const [a, b] = r.loaders.map((l) => r.rows.find((row) => row.plugin === plugin && row.loader === l)!);
      lines.push(`- ${plugin}: type stripping takes ${times(b!.wallMs.p50 / a!.wallMs.p50)} the wall time and ${times(b!.cpuMs.p50 / a!.cpuMs.p50)} the CPU of tsx (p50).`);
    }
  } else {
    lines.push(`- This Node (${r.node}) cannot strip types itself: plugin processes start through tsx.`);
  }
  const { coldRows } = r;
  lines.push(
    '',
    `## Cold calls through the sandboxed pool`,
    '',
    `The word_count example plugin, ${coldRows[0]?.ms.n} calls per loader, each in a new process (no warm spare), sandbox mode \`${r.sandbox}\`: call start → result, as the caller waits.`,
    '',
    '| loader | p50 / max (ms) |',
    '|---|---:|',
    ...coldRows.map((row) => `| ${row.loader} | ${fmt(row.ms.p50)} / ${fmt(row.ms.max)} |`),
  );
  if (coldRows.length === 2) lines.push('', `- Type stripping takes ${times(coldRows[1]!.ms.p50 / coldRows[0]!.ms.p50)} the time of tsx (p50).`);
  return `${lines.join('\n')}\n`;
}
