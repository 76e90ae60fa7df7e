import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { createParser, withReasoning, coalesceText, PARSER_FORMATS, type ParserEvent } from '../../parsers/index.ts';
import { resolveParserFormat } from '../../parsers/format-names.ts';
import { EXIT_FAILURE, printFailure } from './exit-status.ts';

interface ParseOptions {
  format: string;
  chunks?: string;
  options?: string;
  reasoning?: boolean;
  startsInReasoning?: boolean;
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
    .usage('--format <name> [options] [file]')
    .argument('[file]', "raw model output; stdin when absent or '-'")
    // Checked as the command line is read: a wrong name is a usage error (exit 2), told before stdin is waited on.
    // Commander's help says neither that an option is mandatory nor what a free-form value may be: the description does.
    .requiredOption('-f, --format <name>', `required: the tool-call format, one of ${PARSER_FORMATS.join(', ')}; or vLLM's --tool-call-parser name for it (llama3_json, openai, …)`, formatName)
    .option('--chunks <spec>', 'replay a split: "char" (one character per delta), N (N characters per delta), or a JSON file holding an array of deltas', chunksSpec)
    .option('--options <json>', 'parser options as JSON, e.g. \'{"tools":["get_weather"]}\'', parseJsonOption)
    .option('--reasoning', 'treat a leading <think>…</think> block as reasoning')
    .option('--starts-in-reasoning', 'the prompt opened the <think> block (DeepSeek-R1, QwQ, Qwen3 thinking releases): reasoning up to </think>; implies --reasoning')
    .option('--coalesce', 'merge adjacent text fragments (the split-invariant normal form)')
    .action((file: string | undefined, opts: ParseOptions, command: Command) => {
      // Options the format refuses (`{"tools":5}`) are a wrong command line (2), told before stdin
      // is waited on; they failed as the input was parsed, exit 1, as if a file could not be read.
      if (opts.options !== undefined) {
        try {
          createParser(resolveParserFormat(opts.format), JSON.parse(opts.options) as never);
        } catch (err) {
          command.error(`option '--options <json>' argument '${opts.options}' is invalid. ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      // A reader that stops early (`| head`) ends the command quietly, as for any Unix filter.
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') throw err;
        process.exit(process.exitCode ?? 0);
      });
      try {
        for (const line of parseToJsonLines(readInput(file, opts.chunks), opts)) process.stdout.write(`${line}\n`);
      } catch (err) {
        printFailure(err instanceof Error ? err.message : String(err));
        process.exitCode = EXIT_FAILURE;
      }
    });
}

/** The command's core, separate from I/O: deltas in, JSON lines out. */
export function parseToJsonLines(deltas: readonly string[], opts: ParseOptions): string[] {
  const format = resolveParserFormat(opts.format);
  const options = opts.options ? (JSON.parse(opts.options) as Record<string, unknown>) : undefined;
  let parser = createParser(format, options as never);
  if (opts.reasoning || opts.startsInReasoning) parser = withReasoning(parser, { startsInReasoning: opts.startsInReasoning === true });
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
    if (file !== undefined && readText(file) !== joined) throw new Error(`--chunks ${chunks} does not concatenate to the contents of ${file}`);
    return deltas;
  }
  const text = readText(file);
  if (!chunks) return [text];
  const size = chunks === 'char' ? 1 : Number(chunks);
  // Split by code points, not UTF-16 units, as a server's detokenizer would.
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** FILE, or stdin when absent or `-` (as Unix filters take it); a failure names the file ("ENOENT … open 'x'" alone reads like a bug). */
function readText(file: string | undefined): string {
  if (file === '-') file = undefined;
  try {
    return readFileSync(file ?? 0, 'utf8');
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new Error(`cannot read ${file ?? 'stdin'}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : message}`);
  }
}

function formatName(value: string): string {
  try {
    resolveParserFormat(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
}

/**
 * A number that is not a whole one of at least 1 (`0`, `-1`, `2.5`) is a wrong command line; read
 * as a file of deltas, `-1` failed as a missing file (exit 1, "ENOENT … open '-1'").
 */
function chunksSpec(value: string): string {
  if (/^[-+]?(\d+\.?\d*|\.\d+)$/.test(value) && !(/^\d+$/.test(value) && Number(value) >= 1)) {
    throw new InvalidArgumentError('N characters per delta must be a whole number of at least 1');
  }
  return value;
}

function parseJsonOption(value: string): string {
  try {
    JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('not valid JSON');
  }
  return value;
}

