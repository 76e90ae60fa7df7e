/** The process-reuse bench's Markdown report (bench/plugin-start/reuse.ts), apart from its pools so it can be tested. */
import { fixedDigits } from '../fixed-digits.ts';
import type { Summary } from '../stats.ts';

export interface ReuseRow {
  mode: string;
  /** 'sequential' or 'pairs'. */
  pattern: string;
  ms: Summary;
}

export interface ProcessReuseReport {
  command: string;
  /** ISO time the report was made. */
  at: string;
  node: string;
  cpus: string;
  sandbox: string;
  runs: number;
  calls: number;
  /** The reused mode first, then the fresh one: the ratio is the first's mean over the second's. */
  modes: readonly [string, string];
  rows: readonly ReuseRow[];
}

// "–" where there is no figure: a mode whose calls all failed leaves summarize() no values, and
// NaN.toFixed printed "NaN" (a 0 ms mean divided by gave "Infinity×").
const fmt = (v: number) => fixedDigits(v, v < 10 ? 2 : 0);
const times = (v: number) => {
  const text = fixedDigits(v, 3);
  return text === '–' ? text : `${text}×`;
};

export function processReuseMarkdown(r: ProcessReuseReport): string {
  const lines = [
    `# Process reuse (calculator) — ${r.at}`,
    '',
    // The title first, the command under it, as the other reports; the next line names the Node.
    `Command: \`${r.command}\`  `,
    `Node ${r.node}; ${r.cpus}; sandbox mode \`${r.sandbox}\`; ${r.runs} rounds per mode, alternating, each a new pool with one warm spare; ${r.calls} calls one after another, then ${r.calls} in pairs. Call start → result, as the dispatcher waits.`,
    '',
    '| mode | calls | p50 (ms) | p99 (ms) | mean (ms) |',
    '|---|---|---:|---:|---:|',
    ...r.rows.map((row) => `| ${row.mode} | ${row.pattern} | ${fmt(row.ms.p50)} | ${fmt(row.ms.p99)} | ${fmt(row.ms.mean)} |`),
    '',
  ];
  for (const pattern of ['sequential', 'pairs']) {
    const [reused, fresh] = r.modes.map((m) => r.rows.find((row) => row.mode === m && row.pattern === pattern)?.ms.mean ?? NaN);
    lines.push(`- ${pattern}: a reused process answers in ${times(reused! / fresh!)} the mean time of a fresh process per call.`);
  }
  return `${lines.join('\n')}\n`;
}
