import { percent } from '../percent-format.ts';
import type { CaseResult } from './measure-case.ts';
import { spread, type Spread } from './measure.ts';

/** The load the issue sizes the parser cost for: 1,000 concurrent streams at 50 tokens/s each. */
export const STREAMS = 1000;
export const TOKENS_PER_SECOND = 50;
/** Target throughput for the JSON formats and the code-fence parser (issue 3). */
export const TARGET_MB_S = 50;

const JSON_FORMATS = new Set(['hermes', 'mistral', 'llama3-json', 'functionary-v2', 'functionary-v3', 'deepseek-v3', 'deepseek-v31', 'harmony', 'openai-tool-calls']);

export interface RunStats {
  /** MB/s (10^6 bytes of UTF-8 per second): median, and the slowest and fastest batch. */
  mbPerS: Spread;
  nsPerToken: number;
  /** Share of one core at STREAMS × TOKENS_PER_SECOND, in percent. */
  corePercent: number;
}

export function runStats(c: CaseResult, name: string): RunStats | undefined {
  const m = c.runs[name];
  if (m === undefined) return undefined;
  const ns = spread(m.nsPerRun);
  const mb = (nsPerRun: number) => (c.bytes / nsPerRun) * 1e3;
  const nsPerToken = ns.median / c.tokens;
  return {
    mbPerS: { median: mb(ns.median), min: mb(ns.max), max: mb(ns.min) },
    nsPerToken,
    corePercent: (nsPerToken * STREAMS * TOKENS_PER_SECOND) / 1e7,
  };
}

export function isTargetFormat(c: CaseResult): boolean {
  return JSON_FORMATS.has(c.format) || c.format === 'code-fence';
}

const f1 = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
// Two figures or so: 1000 × 50 tok/s costs from 0.05% to 40% of a core across the formats.
const pct = (x: number) => percent(x, x >= 10 ? 0 : x >= 1 ? 1 : 2);
const mbCell = (s: RunStats | undefined) => (s ? `${f1(s.mbPerS.median)} (${f1(s.mbPerS.min)}–${f1(s.mbPerS.max)})` : '—');

/** The Markdown table, one row per case. */
export function markdownTable(cases: readonly CaseResult[]): string {
  const withBefore = cases.some((c) => c.runs.before !== undefined);
  const head = [
    'format',
    'KiB',
    'tokens',
    'B/token',
    'MB/s (min–max)',
    'ns/token',
    `core at ${STREAMS}×${TOKENS_PER_SECOND} tok/s`,
    ...(withBefore ? ['before: MB/s', '× before'] : []),
    '4-char deltas MB/s',
    'whole text MB/s',
    'partial-json MB/s',
    'partial-json ns/token',
    '× partial-json',
  ];
  const rows = cases.map((c) => {
    const now = runStats(c, 'conveyor')!;
    const before = runStats(c, 'before');
    const chars4 = runStats(c, 'chars4');
    const whole = runStats(c, 'whole');
    const alt = runStats(c, 'partial-json');
    return [
      isTargetFormat(c) ? `**${c.id}**` : c.id,
      (c.bytes / 1024).toFixed(1),
      String(c.tokens),
      (c.bytes / c.tokens).toFixed(2),
      mbCell(now),
      now.nsPerToken.toFixed(0),
      pct(now.corePercent),
      ...(withBefore ? [mbCell(before), before ? `${(now.mbPerS.median / before.mbPerS.median).toFixed(2)}×` : '—'] : []),
      chars4 ? f1(chars4.mbPerS.median) : '—',
      whole ? f1(whole.mbPerS.median) : '—',
      alt ? (alt.mbPerS.median < 10 ? alt.mbPerS.median.toFixed(2) : f1(alt.mbPerS.median)) : '—',
      alt ? alt.nsPerToken.toFixed(0) : '—',
      alt ? `${(now.mbPerS.median / alt.mbPerS.median).toFixed(0)}×` : '—',
    ];
  });
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The sentences the issue asks to state: the target, and the cost at 1,000 streams × 50 tokens/s. */
export function summaryLines(cases: readonly CaseResult[]): string[] {
  const target = cases.filter(isTargetFormat).map((c) => ({ c, s: runStats(c, 'conveyor')! }));
  // `--only` may select none of the target rows.
  if (target.length === 0) return [];
  const slowest = target.reduce((a, b) => (b.s.mbPerS.median < a.s.mbPerS.median ? b : a));
  const costliest = target.reduce((a, b) => (b.s.corePercent > a.s.corePercent ? b : a));
  const alts = cases.map((c) => runStats(c, 'partial-json')).filter((s): s is RunStats => s !== undefined);
  const altCost = alts.length ? Math.max(...alts.map((s) => s.corePercent)) : undefined;
  const met = target.filter((t) => t.s.mbPerS.median >= TARGET_MB_S).length;
  return [
    `- Target ≥ ${TARGET_MB_S} MB/s at one token per delta (JSON formats and code-fence, in bold): ${met} of ${target.length} rows meet it; slowest **${slowest.c.id}** at ${f1(slowest.s.mbPerS.median)} MB/s (${slowest.s.nsPerToken.toFixed(0)} ns/token).`,
    `- Cost at ${STREAMS} concurrent streams × ${TOKENS_PER_SECOND} tokens/s (${STREAMS * TOKENS_PER_SECOND} tokens/s): at most **${pct(costliest.s.corePercent)} of one core** (${costliest.c.id}), i.e. ns/token × ${STREAMS * TOKENS_PER_SECOND} / 10⁹.` +
      (altCost !== undefined ? ` Re-parsing with partial-json instead: up to ${pct(altCost)} of one core on these ~3 KiB outputs, and it grows with the output's length.` : ''),
  ];
}
