import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { ConveyorError } from '../../core/errors.ts';
import { createParser, withReasoning, coalesceText, type ParserEvent } from '../../parsers/index.ts';
import { resolveParserFormat } from '../../parsers/format-names.ts';
import { oneLine } from './one-line.ts';

interface ParseOptions {
  format: string;
  chunks?: string;
  options?: string;
  reasoning?: boolean;
  coalesce?: boolean;
}

/**
 * `conveyor parse --format NAME [FILE]`: raw model output in, parser events out as JSON lines.
 * How users check what the gateway will make of their model's text, split as their server splits it.
 */
export function registerParseCommand(program: Command): void {
  program
    .command('parse')
    .description('parse raw model output (FILE or stdin) and print the parser events as JSON lines')
    .argument('[file]', 'raw model output; stdin when absent')
    .requiredOption('-f, --format <name>', "tool-call format (ours or vLLM's --tool-call-parser name)")
    .option('--chunks <spec>', 'replay a split: "char" (one character per delta), N (N characters per delta), or a JSON file holding an array of deltas')
    .option('--options <json>', 'parser options as JSON, e.g. \'{"tools":["get_weather"]}\'', parseJsonOption)
    .option('--reasoning', 'treat a leading <think>…</think> block as reasoning')
    .option('--coalesce', 'merge adjacent text fragments (the split-invariant normal form)')
    .action((file: string | undefined, opts: ParseOptions) => {
      // A reader that stops early (`| head`) ends the command quietly, as for any Unix filter.
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') throw err;
        process.exit(process.exitCode ?? 0);
      });
      try {
        resolveParserFormat(opts.format); // fail before waiting on stdin
        for (const line of parseToJsonLines(readInput(file, opts.chunks), opts)) process.stdout.write(`${line}\n`);
      } catch (err) {
        console.error(`conveyor parse: ${oneLine(err instanceof Error ? err.message : String(err))}`);
        process.exitCode = err instanceof ConveyorError ? 2 : 1;
      }
    });
}

/** The command's core, separate from I/O: deltas in, JSON lines out. */
export function parseToJsonLines(deltas: readonly string[], opts: ParseOptions): string[] {
  const format = resolveParserFormat(opts.format);
  const options = opts.options ? (JSON.parse(opts.options) as Record<string, unknown>) : undefined;
  let parser = createParser(format, options as never);
  if (opts.reasoning) parser = withReasoning(parser);
  const events: Array<ParserEvent & { delta?: number }> = [];
  deltas.forEach((delta, i) => events.push(...parser.push(delta).map((e) => ({ delta: i, ...e }))));
  events.push(...parser.end().map((e) => ({ delta: deltas.length, ...e })));
  const out = opts.coalesce ? coalesceText(events.map(({ delta: _, ...e }) => e as ParserEvent)) : events;
  return out.map((e) => JSON.stringify(e));
}

function readInput(file: string | undefined, chunks: string | undefined): string[] {
  if (chunks && !/^(char|\d+)$/.test(chunks)) {
    // Name the option: a bare "ENOENT … '3x'" or "Unexpected token '<'" does not say which input was wrong.
    let deltas: unknown;
    try {
      deltas = JSON.parse(readFileSync(chunks, 'utf8'));
    } catch (err) {
      throw new Error(`--chunks ${chunks}: expected "char", a number of characters per delta, or a JSON file holding an array of deltas (${(err as Error).message})`);
    }
    if (!Array.isArray(deltas) || !deltas.every((d) => typeof d === 'string')) throw new Error(`--chunks ${chunks}: expected a JSON array of strings`);
    const joined = deltas.join('');
    if (file !== undefined && readFileSync(file, 'utf8') !== joined) throw new Error(`--chunks ${chunks} does not concatenate to the contents of ${file}`);
    return deltas;
  }
  const text = readFileSync(file ?? 0, 'utf8');
  if (!chunks) return [text];
  const size = chunks === 'char' ? 1 : Number(chunks);
  if (size < 1) throw new Error('--chunks N must be at least 1');
  // Split by code points, not UTF-16 units, as a server's detokenizer would.
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function parseJsonOption(value: string): string {
  try {
    JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('not valid JSON');
  }
  return value;
}

