/**
 * Parser time on adversarial outputs, at n and at 2n characters: a linear parser takes about twice
 * as long for twice the text, a quadratic one about four times. Covers what review 6 found
 * quadratic (whitespace after an opener, a repeated marker in one large delta, failing
 * candidates re-read) and a control (hermes). Fed as 3-character deltas (a stream) and as one
 * delta (a replay, `conveyor parse`).
 *
 *   npx tsx bench/parsers/adversarial.ts [--n 100000] [--out DIR]
 *     → bench/results/<date>-parsers-adversarial.{md,json}
 */
import { Command } from 'commander';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { createParser, type ParserFormat } from '../../parsers/index.ts';
import { commandLine } from '../command-line.ts';
import { provenance, provenanceLine } from '../provenance.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
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
  // A folder, as every bench script's --out (default bench/results), no longer a file: the report
  // was written only when --out was given, with no JSON, under whatever name was passed.
  .option('--out <dir>', 'where result files go', 'bench/results')
  .parse();
const { n, out } = program.opts<{ n: number; out: string }>();
// Before measuring; an old `--out <file>.md` is refused here, saying what to pass instead.
checkOutOption(program, out);
const command = commandLine('npx tsx bench/parsers/adversarial.ts', process.argv.slice(2));
const rows: { format: ParserFormat; output: string; ms: Record<'stream' | 'oneDelta', { n: number; twoN: number }> }[] = [];
const lines: string[] = [];
for (const c of CASES) {
  const cells: string[] = [];
  const ms = { stream: { n: 0, twoN: 0 }, oneDelta: { n: 0, twoN: 0 } };
  for (const [mode, deltas] of [['stream', (t: string) => split(t, 3)], ['oneDelta', (t: string) => [t]]] as const) {
    const one = parseMs(c.format, deltas(c.text(n)));
    const two = parseMs(c.format, deltas(c.text(2 * n)));
    ms[mode] = { n: one, twoN: two };
    cells.push(`${one.toFixed(1)}`, `${two.toFixed(1)}`, `${(two / Math.max(one, 0.05)).toFixed(2)}×`);
  }
  rows.push({ format: c.format, output: c.name, ms });
  lines.push(`| ${c.format} | ${c.name.replaceAll('|', '\\|')} | ${cells.join(' | ')} |`);
  process.stderr.write(`${lines.at(-1)}\n`);
}
const origin = { command, date: new Date().toISOString(), node: process.version, ...provenance() };
const report = [
  `# Parsers on adversarial outputs (${origin.date.slice(0, 10)})`,
  '',
  '```sh',
  command,
  '```',
  '',
  `Node ${origin.node}, ${provenanceLine(origin)}. Best of 3 parses (create, push every delta, end). n = ${n} characters; 2n doubles it: linear is ≈2×, quadratic ≈4×.`,
  '',
  '| format | output | 3-char deltas, n (ms) | 2n (ms) | 2n / n | one delta, n (ms) | 2n (ms) | 2n / n |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...lines,
  '',
].join('\n');
const files = writeResultFiles(out, 'parsers-adversarial', { '.md': report, '.json': jsonText({ ...origin, n, rows }) });
process.stdout.write(report);
console.log(`results: ${files.join(', ')}`);
