/**
 * Parser time on adversarial outputs, at n and at 2n characters: a linear parser takes about twice
 * as long for twice the text, a quadratic one about four times. Covers what review 6 found
 * quadratic (whitespace after an opener, a repeated marker in one large delta, failing
 * candidates re-read) and a control (hermes). Fed as 3-character deltas (a stream) and as one
 * delta (a replay, `conveyor parse`).
 *
 *   npx tsx bench/parsers/adversarial.ts [--n 100000] [--out bench/results/<date>-parsers-adversarial.md]
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { createParser, type ParserFormat } from '../../parsers/index.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';

interface Case {
  name: string;
  format: ParserFormat;
  text: (n: number) => string;
}

const CASES: Case[] = [
  { name: 'whitespace after <tool_call>', format: 'qwen3-coder', text: (n) => `<tool_call>${' '.repeat(n)}` },
  { name: 'whitespace after a bare <function=f>', format: 'qwen3-coder', text: (n) => `x <function=f>${'\n'.repeat(n)}` },
  { name: '<function=f> repeated', format: 'qwen3-coder', text: (n) => '<function=f>'.repeat(n / 12) },
  { name: 'a function name that never ends', format: 'qwen3-coder', text: (n) => `<tool_call>\n<function=f>\n<parameter=${'p'.repeat(n)}` },
  { name: 'whitespace after <|python_tag|>', format: 'python-tag', text: (n) => `<|python_tag|>${' '.repeat(n)}` },
  { name: 'a plan line of spaces', format: 'llmcompiler-plan', text: (n) => `1.${' '.repeat(n)}` },
  { name: 'a plan line of tabs', format: 'llmcompiler-plan', text: (n) => '\t'.repeat(n) },
  { name: '{ repeated (failing candidates)', format: 'llama3-json', text: (n) => '{'.repeat(n) },
  { name: '{" repeated (candidates re-read)', format: 'llama3-json', text: (n) => '{"'.repeat(n / 2) },
  { name: 'DeepSeek begin token repeated', format: 'deepseek-v3', text: (n) => '<｜tool▁calls▁begin｜>'.repeat(n / 20) },
  { name: '[ repeated', format: 'pythonic', text: (n) => '['.repeat(n) },
  { name: 'control: whitespace after <tool_call>', format: 'hermes', text: (n) => `<tool_call>${' '.repeat(n)}` },
];

function parseMs(format: ParserFormat, deltas: readonly string[]): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    const parser = createParser(format);
    for (const delta of deltas) parser.push(delta);
    parser.end();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const split = (text: string, size: number): string[] => text.match(new RegExp(`[^]{1,${size}}`, 'g')) ?? [];

// Commander's way, as every bench script: an unknown option or a bad --n was a stack trace (parseArgs) or a run on NaN.
const program = usageErrorsExit2(new Command().name('parsers-adversarial'))
  .description('Parser time on adversarial outputs at n and 2n characters: linear is about 2x, quadratic about 4x.')
  .option('--n <chars>', 'characters of the smaller output (the larger has twice as many)', wholeNumber(100, 10_000_000), 100_000)
  .option('--out <file>', 'also write the Markdown report to this file')
  .parse();
const { n, out } = program.opts<{ n: number; out?: string }>();
const rows: string[] = [];
for (const c of CASES) {
  const cells: string[] = [];
  for (const deltas of [(t: string) => split(t, 3), (t: string) => [t]]) {
    const one = parseMs(c.format, deltas(c.text(n)));
    const two = parseMs(c.format, deltas(c.text(2 * n)));
    cells.push(`${one.toFixed(1)}`, `${two.toFixed(1)}`, `${(two / Math.max(one, 0.05)).toFixed(2)}×`);
  }
  rows.push(`| ${c.format} | ${c.name.replaceAll('|', '\\|')} | ${cells.join(' | ')} |`);
  process.stderr.write(`${rows.at(-1)}\n`);
}
const report = [
  `# Parsers on adversarial outputs (${new Date().toISOString().slice(0, 10)})`,
  '',
  '```sh',
  `npx tsx bench/parsers/adversarial.ts --n ${n}`,
  '```',
  '',
  `Node ${process.version}. Best of 3 parses (create, push every delta, end). n = ${n} characters; 2n doubles it: linear is ≈2×, quadratic ≈4×.`,
  '',
  '| format | output | 3-char deltas, n (ms) | 2n (ms) | 2n / n | one delta, n (ms) | 2n (ms) | 2n / n |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...rows,
  '',
].join('\n');
process.stdout.write(report);
if (out) writeFileSync(out, report);
