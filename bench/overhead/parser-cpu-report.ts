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
    'A round where a request failed (see "checked ok") has no figure and is left out with its pair: a failed request costs some',
    'CPU, less than a whole stream, so neither dividing by all sent nor by those that completed gives the cost of one.',
    ...(json.pairsLeftOut > 0 ? ['', `**${json.pairsLeftOut} pair${json.pairsLeftOut === 1 ? '' : 's'} of rounds left out: a round where a request failed has no figure.**`] : []),
    '',
  ].join('\n');
}
