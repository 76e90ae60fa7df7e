import { MAX_PYTHON_NESTING, PythonNestingError, readPythonArguments } from '../../parsers/formats/python-value-parser.ts';
import { stepReferenceAt } from '../../parsers/formats/plan-step-reference.ts';
import type { PlanStepInput } from './plan-run.ts';

/**
 * A step's positional arguments, a bare `$n` among literals read as the string `"$n"`; or, for
 * literals nested deeper than MAX_PYTHON_NESTING, why the step cannot run.
 *
 * The plan parser hands over a step whose arguments are not all Python literals as one string, the
 * whole argument text, as LLMCompiler does: right for an expression (`calculator($1 * 2)` →
 * `["$1 * 2"]`), but a bare reference beside literals (`format("{} pages.", $3)`) made that text,
 * quotes and comma included, the first argument: format's template, with its `{}` left unfilled.
 * Quoting each bare reference and parsing again gives `["{} pages.", "$3"]`, what the model meant;
 * text that is still no list of literals (`$1 * 2`) stays the one argument it was. A literal the
 * parser refused for its depth would reach the tool as that text too, with nothing to tell the
 * model what went wrong: that is the problem returned instead.
 */
export function stepArguments(step: Pick<PlanStepInput, 'args' | 'raw'>): unknown[] | { problem: string } {
  const { args, raw } = step;
  const text = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
  // Only the parser's fallback: a real string argument that happens to hold `$1` is left alone.
  if (args.length !== 1 || args[0] !== text) return args;
  const quoted = quoteBareReferences(text);
  const read = readPythonArguments(quoted);
  if (!('error' in read)) return quoted === text ? args : (read.value as unknown[]);
  return read.error instanceof PythonNestingError ? { problem: `an argument nests lists, tuples or dicts deeper than ${MAX_PYTHON_NESTING} levels` } : args;
}

/** `"a {}", $1` → `"a {}", "$1"`: references outside string literals become strings. */
export function quoteBareReferences(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const end = stringLiteralEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const reference = ch === '$' ? stepReferenceAt(text, i)?.text : undefined;
    if (reference !== undefined) {
      out += `"${reference}"`;
      i += reference.length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** Index just past the string literal opening at `start` (or the text's end if it never closes). */
export function stringLiteralEnd(text: string, start: number): number {
  const quote = text[start]!;
  const delimiter = text.startsWith(quote.repeat(3), start) ? quote.repeat(3) : quote;
  let i = start + delimiter.length;
  while (i < text.length) {
    // A backslash keeps the next character inside the string, in raw strings too (`r"\""`).
    if (text[i] === '\\') i += 2;
    else if (text.startsWith(delimiter, i)) return i + delimiter.length;
    else i++;
  }
  return text.length;
}
