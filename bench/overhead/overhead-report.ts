import { fixedDigits, signedDigits } from '../fixed-digits.ts';
import type { OverheadJson, TargetName, TargetStats } from './run-overhead.ts';

const ms = (v: number | undefined, digits = 2) => fixedDigits(v, digits);
const signed = (v: number | undefined) => signedDigits(v, 2);

/** The Markdown report of runOverhead; `command` goes under the title. */
export function overheadMarkdown(json: OverheadJson, command?: string): string {
  const meta = json.meta as {
    date: string;
    node: string;
    cpus: string;
    loadavg: number[];
    profile: string;
    streamTokens: number;
    baseline?: string | null;
    portkey: { version?: string; mode?: string; error?: string };
    unsettled?: string[];
  };
  const portkey = meta.portkey.error ? `**Portkey could not run: ${meta.portkey.error}**` : `Portkey ${meta.portkey.version} (${meta.portkey.mode})`;
  const notes: string[] = [];
  // timedChatStream gives a stream with no content token a NaN TTFT, which summarize() leaves out of
  // p50/p99 and counts in `missing`: the cell is starred and a note says how many streams that was,
  // or the figures read as every stream's.
  const ttft = (level: number, name: TargetName, t: TargetStats) => {
    const cell = `${ms(t.ttftMs.p50)} / ${ms(t.ttftMs.p99)}`;
    if (t.ttftMs.missing === 0) return cell;
    const all = t.ttftMs.n + t.ttftMs.missing;
    notes.push(
      `\\* ${level} streams, ${name}: ${t.ttftMs.missing} of ${all} streams had no content token; their TTFT is left out ` +
        `(${t.ttftMs.n > 0 ? `the figures are from the other ${t.ttftMs.n}` : 'no figure'}).`,
    );
    return `${cell}*`;
  };
  // The added TTFT is the difference of two such percentiles: starred when either side lacked streams.
  const lacksTtft = (t: TargetStats | undefined) => (t?.ttftMs.missing ?? 0) > 0;
  const lines = [
    `# Gateway overhead — ${meta.date}`,
    '',
    ...(command === undefined ? [] : [`Command: \`${command}\`  `]),
    `Node ${meta.node}; ${meta.cpus}; load average at the end ${meta.loadavg.join(' / ')}. Simulator profile \`${meta.profile}\`, ` +
      `${meta.streamTokens}-token plain-text streams (no tools). Targets: **direct** = the simulator; **conveyor** = our gateway ` +
      `(\`startConveyor\`, default config, Mistral parser + code fences active); ` +
      (meta.baseline ? `**baseline** = the same gateway as of \`${meta.baseline}\` (--baseline); ` : '') +
      `**portkey** = ${portkey}. Every server in its own process; ` +
      'the client (undici, keep-alive) in the bench process. Each level keeps that many streams in flight (closed loop), their starts spread',
    'evenly over a stream\'s lifetime as in steady-state serving. Measuring starts once every server has settled after its start-up (under 10% of a core over 500 ms).',
    '',
    '| streams | target | TTFT p50 / p99 (ms) | ITL p50 / p99 (ms) | added TTFT p50 / p99 (ms) | added ITL p50 / p99 (ms) | gateway CPU per 1k tokens (ms) | sim CPU per 1k tokens (ms) | streams (errors, short) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const level of json.levels) {
    for (const name of ['direct', 'conveyor', 'baseline', 'portkey'] as TargetName[]) {
      const t = level.targets[name];
      if (!t) continue;
      const added = name === 'direct' ? undefined : level.added[name];
      lines.push(
        `| ${level.concurrency} | ${name} | ${ttft(level.concurrency, name, t)} | ${ms(t.itlMs.p50)} / ${ms(t.itlMs.p99)} | ` +
          `${added ? `${signed(added.ttftP50Ms)} / ${signed(added.ttftP99Ms)}${lacksTtft(t) || lacksTtft(level.targets.direct) ? '*' : ''}` : '—'} | ${added ? `${signed(added.itlP50Ms)} / ${signed(added.itlP99Ms)}` : '—'} | ` +
          `${name === 'direct' ? '—' : ms(t.cpuMsPer1kTokens, 1)} | ${ms(t.simCpuMsPer1kTokens, 1)} | ${t.streams} (${t.errors.length}, ${t.shortStreams}) |`,
      );
    }
  }
  const tgt = json.target;
  const verdict =
    tgt.conveyorAddedTtftP50Ms === null
      ? 'not measured'
      : `${fixedDigits(tgt.conveyorAddedTtftP50Ms, 3)} ms — ${tgt.under1ms ? 'under' : '**not** under'} 1 ms` +
        (tgt.belowPortkey === null ? ' (no Portkey in this run)' : `, ${tgt.belowPortkey ? 'below' : '**not** below'} Portkey's`);
  lines.push(
    '',
    `Issue 5 target: our added TTFT p50 at ${tgt.concurrency} streams < 1 ms and below Portkey's. This run: ${verdict}.`,
    '',
    'TTFT: request sent → first non-empty content delta, at the client. ITL: gap between consecutive content deltas as the client read them.',
    // At one stream a level has a dozen TTFTs (two with --quick): p99 is its slowest, not a 1-in-100 tail.
    'p50 / p99: nearest rank (no interpolation); over fewer than 100 samples p99 is the largest.',
    'added = gateway percentile − direct percentile, from the same run (rounds interleaved A B C, B C A, …). CPU: user + system time of the',
    'serving process (/proc, 10 ms ticks) during that target\'s own bursts, divided by the tokens the simulator generated (both read with the simulator idle); the simulator column is the',
    'same work for every target and shows how noisy the CPU figures are. On a 2-core machine the client, the simulator and the gateway',
    'share the cores: at high concurrency the latencies also measure contention, which is where a gateway\'s CPU per token shows up.',
    ...unsettledNote(meta.unsettled ?? [], json.levels[0]?.concurrency),
    ...notes.flatMap((note) => ['', note]),
    '',
  );
  return lines.join('\n');
}

/**
 * runOverhead waits at most 20 s for each server's start-up CPU to end; a server still busy then is
 * measured anyway, and its start-up CPU counts in the first level's figures: the report says so
 * rather than claim every server had settled.
 */
function unsettledNote(unsettled: readonly string[], firstLevel: number | undefined): string[] {
  if (unsettled.length === 0 || firstLevel === undefined) return [];
  const names = unsettled.length === 1 ? unsettled[0]! : `${unsettled.slice(0, -1).join(', ')} and ${unsettled.at(-1)!}`;
  const its = unsettled.length === 1 ? 'its' : 'their';
  return [
    '',
    `**${names} had not settled after ${its} start-up when measuring began** (still above 10% of a core after 20 s): ` +
      `${its} start-up CPU is counted in the ${firstLevel}-stream level's CPU per 1k tokens, which reads high.`,
  ];
}
