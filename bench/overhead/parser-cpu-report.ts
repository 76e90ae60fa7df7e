/** The parser-cpu bench's Markdown report (runParserCpu), apart from its servers so it can be tested. */
import { percent } from '../percent-format.ts';
import type { ParserCpuJson } from './parser-cpu.ts';
import { fixedDigits } from '../fixed-digits.ts';

export function parserCpuMarkdown(json: ParserCpuJson, command?: string): string {
  const meta = json.meta as { date: string; node: string; cpus: string; workload: string; profile: string };
  const us = (v: number) => fixedDigits(v, 0);
  const { parse, none } = json.perRequestUs;
  return [
    `# Parser CPU overhead — ${meta.date}`,
    '',
    ...(command === undefined ? [] : [`Command: \`${command}\`  `]),
    `Node ${meta.node}; ${meta.cpus}. Workload: ${meta.workload}; simulator profile \`${meta.profile}\`. ` +
      `${json.rounds.length} rounds of ${json.requestsPerRound} requests (${json.concurrency} at a time), parse and pass-through alternating (A B B A …).`,
    '',
    '| mode | gateway CPU per request, µs (mean ± std over rounds) | p50 | requests checked ok |',
    '|---|---:|---:|---:|',
    `| parse (Mistral parser + code fences, tool_calls deltas) | ${us(parse.mean)} ± ${us(parse.std)} | ${us(parse.p50)} | ${json.checks.parse.ok}/${json.checks.parse.requests} |`,
    `| \`tool_parser: "none"\` (pass-through) | ${us(none.mean)} ± ${us(none.std)} | ${us(none.p50)} | ${json.checks.none.ok}/${json.checks.none.requests} |`,
    '',
    `Parsing and dispatch cost **${us(json.differenceUs.mean)} ± ${us(json.differenceUs.standardError)} µs per request** (paired rounds, ± standard error): ` +
      `**${percent(json.shareOfGatewayCpuPct)}** of the gateway's CPU for this request, ${percent(json.extraOverPassThroughPct)} extra over pass-through ` +
      '(Conveyor paper: 0.6% extra CPU, measured against the whole serving stack rather than the gateway process alone).',
    '',
    'CPU = the gateway process\'s own process.cpuUsage() (user + system, all threads) before and after each round, over IPC; the',
    'difference includes everything parsing changes: the parser itself, call routing, and writing tool_calls deltas instead of content deltas.',
    'Each round\'s CPU is divided by the requests that completed correctly (the "checked ok" column), not by all sent: a failed',
    'request costs less CPU, so counting it would pull the figure down; a round where none completed is left out, with its pair.',
    '',
  ].join('\n');
}
