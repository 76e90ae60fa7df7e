/** The forward bench's Markdown report (bench/forward/run.ts), apart from its servers so it can be tested. */
import { fixedDigits, signedDigits } from '../fixed-digits.ts';

export const TARGETS = ['completions, direct', 'completions, forwarded', 'chat, through the gateway'] as const;
export type Target = (typeof TARGETS)[number];

export interface ForwardRow {
  concurrency: number;
  target: Target;
  streams: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  /** Streams that never saw a token's text: left out of the TTFT figures, and counted here. */
  ttftMissing: number;
  gatewayCpuPer1kTokens: number[];
  simCpuPer1kTokens: number[];
}

/** A server still busy (above 10% of a core) 20 s after a level's warm-up, when its phases began anyway. */
export interface Unsettled {
  concurrency: number;
  server: string;
}

export interface ForwardReport {
  command: string;
  date: string;
  node: string;
  cpus: string;
  tokens: number;
  rounds: number;
  phaseMs: number;
  rows: ForwardRow[];
  unsettled?: Unsettled[];
}

// A phase without a figure (no events: its CPU divided by zero) leaves the range without one too.
const range = (xs: number[]) => (xs.length && xs.every(Number.isFinite) ? `${fixedDigits(Math.min(...xs), 1)}–${fixedDigits(Math.max(...xs), 1)}` : '–');

export function forwardMarkdown(r: ForwardReport): string {
  const direct = (c: number) => r.rows.find((row) => row.concurrency === c && row.target === 'completions, direct')!;
  const notes: string[] = [];
  // A TTFT from fewer streams than the row ran is starred, with a note saying how many lacked it.
  const ttft = (row: ForwardRow) => {
    const cell = `${fixedDigits(row.ttftP50Ms, 2)} / ${fixedDigits(row.ttftP99Ms, 2)}`;
    if (row.ttftMissing === 0) return cell;
    const rest = row.streams - row.ttftMissing;
    notes.push(`\\* ${row.concurrency} streams, ${row.target}: ${row.ttftMissing} of ${row.streams} streams had no token text; their TTFT is left out (${rest > 0 ? `the figures are from the other ${rest}` : 'no figure'}).`);
    return `${cell}*`;
  };
  const lines = [
    `# Forwarded endpoints: /v1/completions straight, forwarded, and chat through the gateway — ${r.date}`,
    '',
    `Command: \`${r.command}\`  `,
    `Node ${r.node}, ${r.cpus}; simulator profile bench/overhead/overhead-profile.json; ${r.tokens}-token streams, closed loop, ${r.rounds} phases of ${r.phaseMs / 1000} s per target and level, alternating order, after one warm-up phase each; each level measured once both servers had settled after its warm-up (under 10% of a core over 500 ms).`,
    '',
    '| streams | target | streams done | TTFT p50 / p99 (ms) | added TTFT p50 | gateway CPU per 1k tokens (ms, per phase) | simulator CPU per 1k tokens |',
    '|---:|---|---:|---:|---:|---:|---:|',
    ...r.rows.map((row) => {
      const added = row.target === 'completions, direct' ? '–' : signedDigits(row.ttftP50Ms - direct(row.concurrency).ttftP50Ms, 2);
      const gatewayCpu = row.target === 'completions, direct' ? '–' : range(row.gatewayCpuPer1kTokens);
      return `| ${row.concurrency} | ${row.target} | ${row.streams} | ${ttft(row)} | ${added} | ${gatewayCpu} | ${range(row.simCpuPer1kTokens)} |`;
    }),
    '',
    'added TTFT = the target\'s p50 minus the direct p50 at the same level, same run. Compare within one run only.',
    ...notes.flatMap((note) => ['', note]),
    ...(r.unsettled ?? []).flatMap((u) => [
      '',
      `**${u.server} had not settled when the ${u.concurrency}-stream level began** (still above 10% of a core 20 s after its warm-up): its CPU per 1k tokens at that level includes that other work.`,
    ]),
  ];
  return `${lines.join('\n')}\n`;
}
