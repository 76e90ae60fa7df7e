/** The parser-cpu bench's Markdown report (runParserCpu), apart from its servers so it can be tested. */
import { percent } from '../percent-format.ts';
import type { ParserCpuJson } from './parser-cpu.ts';
import { fixedDigits } from '../fixed-digits.ts';

export function parserCpuMarkdown(json: ParserCpuJson, command?: string): string {
  const meta = json.meta as { date: string; node: string; cpus: string; workload: string; profile: string };
  const { parse, none } = json.perRequestUs;
  return [
    `# Parser CPU overhead — ${meta.date}`,
    '',
    ...(command === undefined ? [] : [`Command: \`${command}\`  `]),
    `Node ${meta.node}; ${meta.cpus}. Workload: ${meta.workload}; simulator profile \`${meta.profile}\`. ` +
      `${json.rounds.length} rounds${json.baseline ? ' per gateway' : ''} of ${json.requestsPerRound} requests (${json.concurrency} at a time), parse and pass-through alternating (A B B A …).`,
    '',
    '| mode | gateway CPU per request, µs (mean ± std over rounds) | p50 | requests checked ok |',
    '|---|---:|---:|---:|',
    `| parse (Mistral parser + code fences, tool_calls deltas) | ${us(parse.mean)} ± ${us(parse.std)} | ${us(parse.p50)} | ${json.checks.parse.ok}/${json.checks.parse.requests} |`,
    `| \`tool_parser: "none"\` (pass-through) | ${us(none.mean)} ± ${us(none.std)} | ${us(none.p50)} | ${json.checks.none.ok}/${json.checks.none.requests} |`,
    ...baselineRows(json),
    '',
    `Parsing and dispatch cost **${us(json.differenceUs.mean)} ± ${us(json.differenceUs.standardError)} µs per request** (paired rounds, ± standard error): ` +
      `**${percent(json.shareOfGatewayCpuPct)}** of the gateway's CPU for this request, ${percent(json.extraOverPassThroughPct)} extra over pass-through ` +
      '(Conveyor paper: 0.6% extra CPU, measured against the whole serving stack rather than the gateway process alone).',
    '',
    'CPU = the gateway process\'s own process.cpuUsage() (user + system, all threads) before and after each round, over IPC; the',
    'difference includes everything parsing changes: the parser itself, call routing, and writing tool_calls deltas instead of content deltas.',
    'A round where a request failed (see "checked ok") has no figure and is left out with its pair: a failed request costs some',
    'CPU, less than a whole stream, so neither dividing by all sent nor by those that completed gives the cost of one.',
    ...(json.pairsLeftOut > 0 ? ['', `**${json.pairsLeftOut} pair${json.pairsLeftOut === 1 ? '' : 's'} of rounds left out: a round where a request failed has no figure.**`] : []),
    ...baselineLines(json),
    '',
  ].join('\n');
}

const us = (v: number) => fixedDigits(v, 0);
const times = (v: number) => (Number.isFinite(v) ? `${fixedDigits(v, 2)}×` : '–');
const baselineName = (b: NonNullable<ParserCpuJson['baseline']>) => `\`${b.label}\`${b.commit && b.commit !== b.label ? ` (${b.commit})` : ''}`;

/** `--baseline`: its gateway's two rows, under this tree's. */
function baselineRows(json: ParserCpuJson): string[] {
  const b = json.baseline;
  if (!b) return [];
  return (['parse', 'none'] as const).map((mode) => {
    const s = b.perRequestUs[mode];
    return `| baseline ${baselineName(b)}, ${mode === 'parse' ? 'parse' : 'pass-through'} | ${us(s.mean)} ± ${us(s.std)} | ${us(s.p50)} | ${b.checks[mode].ok}/${b.checks[mode].requests} |`;
  });
}

/** `--baseline`: the ratios of this tree's CPU per request to the baseline's, and the baseline's parsing cost. */
function baselineLines(json: ParserCpuJson): string[] {
  const { baseline: b, ratio } = json;
  if (!b || !ratio) return [];
  return [
    '',
    `**Against the baseline** ${baselineName(b)} (its gateway on the same simulator, its rounds interleaved with this tree's, A B B A): ` +
      `this tree's CPU per request is **${times(ratio.parse)}** the baseline's parsed, ${times(ratio.none)} in pass-through, ` +
      `and its parsing cost ${times(ratio.difference)} (the baseline's: ${us(b.differenceUs.mean)} ± ${us(b.differenceUs.standardError)} µs per request, ${percent(b.shareOfGatewayCpuPct)} of its CPU). ` +
      `Ratios of the means over the ${ratio.pairs} pair${ratio.pairs === 1 ? '' : 's'} of rounds where both gateways had every figure; under 1× = this tree is cheaper.`,
    ...(b.pairsLeftOut > 0 ? ['', `**${b.pairsLeftOut} of the baseline's pairs of rounds left out: a round where a request failed has no figure.**`] : []),
  ];
}
