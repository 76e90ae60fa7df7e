import { stepReferences } from '../../parsers/formats/plan-step-reference.ts';
import type { ToolResult } from '../plugin-types.ts';

/**
 * What `$n` stands for in text: the scalar `data.value` of step n's result when its tool gives one
 * (a search's count of matching pages, a calculator's number), else its observation text. An
 * observation is written for the model to read, so `calculator("$1 + $2")` could never parse
 * two search result lists; a tool that has one number or word to hand on says so in `value`.
 * A boolean is written as Python writes it (`True`), as the model's own literal is (literalAsText):
 * the plan is Python, and `echo("on: $3")` read "on: true" where `echo(True)` reads "True".
 * No scalar (null, an object) has no one text: the observation stands for it.
 */
export function stepValue(result: ToolResult): string {
  const value = result.data?.['value'];
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return scalarValue(result) ?? result.content;
}

/** The result's `data.value` as text when it is a scalar (string, number, boolean, bigint). */
export function scalarValue(result: ToolResult): string | undefined {
  const value = result.data?.['value'];
  const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
  return scalar ? String(value) : undefined;
}

/** A number as JSON writes it: what a calculator's text value is when it is one. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A whole argument that is one reference (`repeat("ab", $1)`, `times=${1}`), for a parameter
 * that takes a number or a boolean and no text: step n's value as that type. As text it reached
 * the tool as "3", which a JSON Schema `integer` refuses ("expected number, received string"),
 * though the model meant the number (LLMCompiler's tools are Python functions that take it).
 * Undefined where the value is none of the types the parameter takes: the text goes in, and the
 * tool's own check answers; so does an integer past 2^53, whose digits no number holds.
 */
export function typedStepValue(property: unknown, argument: unknown, results: ReadonlyMap<number, ToolResult>): number | boolean | undefined {
  if (typeof argument !== 'string') return undefined;
  const [reference, another] = stepReferences(argument);
  if (reference === undefined || another !== undefined || reference.text !== argument) return undefined;
  const result = results.get(reference.step);
  const declared = (property as { type?: unknown } | null)?.type;
  const types = Array.isArray(declared) ? declared : [declared];
  if (result === undefined || types.includes('string')) return undefined;
  const value = result.data?.['value'];
  const text = (scalarValue(result) ?? result.content).trim();
  if (types.includes('number') || types.includes('integer')) {
    if (typeof value === 'number') return value;
    const number = Number(text);
    if (NUMBER.test(text) && Number.isFinite(number) && (!Number.isInteger(number) || Number.isSafeInteger(number))) return number;
  }
  if (types.includes('boolean')) {
    if (typeof value === 'boolean') return value;
    if (text === 'True' || text === 'true') return true;
    if (text === 'False' || text === 'false') return false;
  }
  return undefined;
}
