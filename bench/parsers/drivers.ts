import { parse as parsePartialJson } from 'partial-json';
import type { ParserEvent, ToolCallParser } from '../../parsers/parser-events.ts';
import type { BenchCall } from './corpus.ts';
import { modelJson } from './corpus.ts';
import type { AlternativeFrame, BenchCase } from './cases.ts';
import { tokenDeltas } from './token-deltas.ts';

/** What a driver needs from a parsers implementation (this tree's, or a baseline copy's). */
export interface ParsersModule {
  createParser(format: string, options?: unknown): ToolCallParser;
  withReasoning(inner: ToolCallParser, options?: unknown): ToolCallParser;
  createOpenAIToolCallsParser(options?: unknown): ToolCallParser & {
    pushToolCallDelta(part: { index: number; id?: string; name?: string; arguments?: string }): ParserEvent[];
    finish(reason: string): ParserEvent[];
  };
}

/** One delta of a stream: content text, or an OpenAI `delta.tool_calls` fragment. */
type Step = { text: string } | { index: number; id?: string; name?: string; arguments?: string };

/** A case cut into deltas, with what the throughput is measured against. */
export interface Prepared {
  case: BenchCase;
  /** One token per delta (real Mistral token boundaries). */
  steps: Step[];
  /** UTF-8 bytes of the whole output (for openai-tool-calls: content plus argument text). */
  bytes: number;
  tokens: number;
}

export function prepare(c: BenchCase): Prepared {
  if (c.toolCalls === undefined) {
    const { deltas, tokens } = tokenDeltas(c.text);
    return { case: c, steps: deltas.map((text) => ({ text })), bytes: Buffer.byteLength(c.text), tokens };
  }
  // vLLM streams a call as one fragment with the id and name, then the arguments token by token.
  const content = tokenDeltas(c.text);
  const steps: Step[] = content.deltas.map((text) => ({ text }));
  let bytes = Buffer.byteLength(c.text);
  let tokens = content.tokens;
  c.toolCalls.forEach((call: BenchCall, index) => {
    const args = modelJson(call.args);
    const split = tokenDeltas(args);
    steps.push({ index, id: `chatcmpl-tool-${index}`, name: call.name, arguments: '' });
    for (const fragment of split.deltas) steps.push({ index, arguments: fragment });
    bytes += Buffer.byteLength(args);
    tokens += split.tokens;
  });
  return { case: c, steps, bytes, tokens };
}

/** A run: parse the whole output once; returns a count so the work cannot be optimised away. */
export type Run = () => number;

/**
 * How a run cuts the text: one token per delta (the benchmark's measure), fixed 4-character
 * deltas (how earlier numbers in parsers/README.md were taken), or the whole text at once.
 */
export type Split = 'token' | 'chars4' | 'whole';

/** Conveyor's parser, fed the output cut as `split` says. */
export function conveyorRun(impl: ParsersModule, p: Prepared, split: Split = 'token'): Run {
  const c = p.case;
  if (c.toolCalls !== undefined) {
    const steps = p.steps;
    return () => {
      const parser = impl.createOpenAIToolCallsParser(c.options);
      let n = 0;
      for (const s of steps) n += ('text' in s ? parser.push(s.text) : parser.pushToolCallDelta(s)).length;
      return n + parser.finish('tool_calls').length + parser.end().length;
    };
  }
  const deltas = split === 'whole' ? [c.text] : split === 'chars4' ? (c.text.match(/[^]{1,4}/g) ?? []) : p.steps.map((s) => (s as { text: string }).text);
  const make = c.reasoning ? () => impl.withReasoning(impl.createParser(c.format, c.options)) : () => impl.createParser(c.format, c.options);
  // As the gateway drives it (RoundParser.text): pushFast where the parser has it.
  return () => {
    const parser = make();
    let n = 0;
    if (parser.pushFast === undefined) for (const d of deltas) n += parser.push(d).length;
    else
      for (const d of deltas) {
        const events = parser.pushFast(d);
        n += typeof events === 'string' ? 1 : events.length;
      }
    return n + parser.end().length;
  };
}

/**
 * The obvious alternative for JSON formats, as vLLM's tool parsers and many clients do it: keep
 * the whole text, and on every delta cut out the current call and re-parse it with a partial-JSON
 * parser, then re-serialise the arguments to diff them against what was sent. Each delta costs
 * O(length of the call so far), so a call costs O(n²).
 */
export function alternativeRun(p: Prepared): Run | undefined {
  const frame = p.case.alternative;
  if (frame === undefined) return undefined;
  if (p.case.toolCalls !== undefined) return accumulatedArgumentsRun(p);
  const deltas = p.steps.map((s) => (s as { text: string }).text);
  return () => {
    let text = '';
    let n = 0;
    for (const d of deltas) {
      text += d;
      const args = reparse(text, frame);
      if (args !== undefined) n += JSON.stringify(args).length;
    }
    return n;
  };
}

/** OpenAI `delta.tool_calls`: the client appends each fragment and re-parses the arguments. */
function accumulatedArgumentsRun(p: Prepared): Run {
  const steps = p.steps;
  return () => {
    const args: string[] = [];
    let n = 0;
    for (const s of steps) {
      if ('text' in s) continue;
      args[s.index] = (args[s.index] ?? '') + (s.arguments ?? '');
      const value = tryParse(args[s.index]!);
      if (value !== undefined) n += 1;
    }
    return n;
  };
}

function reparse(text: string, frame: AlternativeFrame): unknown {
  let from = 0;
  for (const marker of frame.start) {
    const at = text.lastIndexOf(marker);
    if (at >= 0 && at + marker.length > from) from = at + marker.length;
  }
  if (frame.start.length > 0 && from === 0) return undefined;
  let to = text.length;
  for (const marker of frame.end) {
    const at = text.indexOf(marker, from);
    if (at >= 0 && at < to) to = at;
  }
  let open = from;
  while (open < to && text[open] !== '{' && text[open] !== '[') open++;
  if (open === to) return undefined;
  const value = tryParse(text.slice(open, to));
  if (value === null || typeof value !== 'object') return undefined;
  const call = Array.isArray(value) ? value[value.length - 1] : value;
  // A whole object is the arguments (Mistral [ARGS], DeepSeek, Functionary, harmony).
  return call?.arguments ?? call?.parameters ?? call;
}

function tryParse(text: string): unknown {
  try {
    return parsePartialJson(text);
  } catch {
    // Cut inside a token partial-json cannot complete (vLLM returns "no delta yet" there).
    return undefined;
  }
}
