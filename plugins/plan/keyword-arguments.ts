import { MAX_PYTHON_NESTING, PythonNestingError, readPythonLiteral } from '../../parsers/formats/python-value-parser.ts';
import type { PlanStepInput } from './plan-run.ts';
import { quoteBareReferences, stepArguments, stringLiteralEnd } from './step-arguments.ts';

/** A step's arguments: positional ones (mapped onto the tool's parameters in order), then `name=value` ones. */
export interface StepCall {
  positional: unknown[];
  keywords: Array<[name: string, value: unknown]>;
}

// `name=value`, not `name == value` (a comparison in an expression argument).
const KEYWORD = /^\s*([A-Za-z_]\w*)\s*=(?!=)([\s\S]*)$/;

/**
 * The step's positional and keyword arguments, or why the step cannot run.
 *
 * The plan parser gives a step whose arguments are not all literals as one string, the whole
 * argument text, as LLMCompiler does, and keywords are no literals: `calculator(expression="2+2")`
 * reached calculator as the expression `expression="2+2"`, which mathjs read as an assignment and
 * answered `"2+2"` as a success (and `search(query="x")` searched for the word "query" too). A
 * model writes keywords in Python syntax often enough, so each `name=value` at the top level of
 * that text is read here; its value is a literal, or its text where it is none (`x=$1 * 2`), as
 * the parser's fallback does for the whole.
 */
export function stepCall(step: Pick<PlanStepInput, 'args' | 'raw'>): StepCall | { problem: string } {
  const { args, raw } = step;
  const text = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
  if (args.length === 1 && args[0] === text) {
    const keywords = keywordCall(text);
    if (keywords !== undefined) return keywords;
  }
  const positional = stepArguments(step);
  return Array.isArray(positional) ? { positional, keywords: [] } : positional;
}

/** `text` read as `a, name=b, …` when it has a top-level keyword; undefined when it has none or is no such list. */
function keywordCall(text: string): StepCall | { problem: string } | undefined {
  const segments = topLevelSegments(text);
  if (segments === undefined || !segments.some((s) => KEYWORD.test(s))) return undefined;
  const call: StepCall = { positional: [], keywords: [] };
  for (const segment of segments) {
    const keyword = KEYWORD.exec(segment);
    // A positional argument after a keyword is no Python call: left to the parser's fallback.
    if (keyword === null && call.keywords.length > 0) return undefined;
    const read = argumentValue(keyword === null ? segment : keyword[2]!);
    if ('problem' in read) return read;
    if (keyword === null) call.positional.push(read.value);
    else call.keywords.push([keyword[1]!, read.value]);
  }
  return call;
}

/** One argument's text as its literal (a bare `$n` read as `"$n"`), or the text itself when it is no literal. */
function argumentValue(text: string): { value: unknown } | { problem: string } {
  const read = readPythonLiteral(`${quoteBareReferences(text.trim())}\n`);
  if (!('error' in read)) return { value: read.value };
  if (read.error instanceof PythonNestingError) return { problem: `an argument nests lists, tuples or dicts deeper than ${MAX_PYTHON_NESTING} levels` };
  return { value: text.trim() };
}

/** `text` split at the commas outside strings and brackets; undefined for an empty argument (`a,,b`). */
function topLevelSegments(text: string): string[] | undefined {
  const segments: string[] = [];
  let depth = 0;
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      i = stringLiteralEnd(text, i);
      continue;
    }
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (ch === ',' && depth === 0) {
      segments.push(text.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  segments.push(text.slice(start));
  // A trailing comma, as Python allows (`f(a=1,)`).
  if (segments.length > 1 && segments.at(-1)!.trim() === '') segments.pop();
  return segments.some((s) => s.trim() === '') ? undefined : segments;
}
