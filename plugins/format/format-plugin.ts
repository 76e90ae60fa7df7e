import { z } from 'zod';
import { definePlugin } from '../kit/define-plugin.ts';
import type { ToolPlugin, ToolResult } from '../plugin-types.ts';

const FORMAT_TOOL = 'format';
/** value1..value3: the parameters a placeholder's value can come from. */
const VALUE_COUNT = 3;
// `{{` and `}}` are literal braces, as in Python's str.format: the plan steps that call format are
// written in Python's syntax, and without an escape no template could say "{}" itself.
// Any other `{…}` (a name, a format spec: `{total}`, `{:.2f}`) is what a model used to Python means
// as a placeholder too: it is refused, not left in the text with its value dropped.
const PLACEHOLDER = /\{\{|\}\}|\{([^{}]*)\}/g;
// zod's own message for a union that no member accepts is "Invalid input": nothing a model that
// passed an object or null could fix its call from.
const notScalar = (input: unknown) =>
  `expected a string, number or boolean, got ${input === null ? 'null (leave the value out instead)' : Array.isArray(input) ? 'a list' : typeof input === 'object' ? 'an object' : typeof input}`;
const value = (n: number) =>
  z
    .union([z.string(), z.number(), z.boolean()], { error: (issue) => (issue.code === 'invalid_union' ? notScalar(issue.input) : undefined) })
    .optional()
    .describe(`The value for {${n}} (or the ${n === 1 ? 'first' : n === 2 ? 'second' : 'third'} {}).`);

/**
 * Fills `{}` (left to right) or `{1}`..`{3}` in `template`, not both; explains what is missing, or
 * a `{name}` or `{:.2f}` it does not fill, instead of guessing. One pass over the template: a value goes in as it is, so a `{}` or `{2}` inside a value
 * ("set() is {}") is text, never another placeholder.
 */
export function formatTemplate(template: string, values: readonly unknown[]): ToolResult {
  let next = 0;
  let missing: { placeholder: string; at: number } | undefined;
  let unknown: string | undefined;
  const numbering = { automatic: false, manual: false };
  const text = template.replace(PLACEHOLDER, (match, position: string | undefined) => {
    if (position === undefined) return match[0]!; // `{{` or `}}`
    if (!/^\d*$/.test(position)) {
      unknown ??= match;
      return match;
    }
    numbering[position === '' ? 'automatic' : 'manual'] = true;
    const at = position === '' ? next++ : Number(position) - 1;
    const found = values[at];
    if (found === undefined || found === null) missing ??= { placeholder: match === '{}' ? `{} number ${at + 1}` : match, at };
    return found === undefined || found === null ? match : valueText(found);
  });
  if (unknown !== undefined) {
    return { ok: false, content: `error: ${unknown} in ${JSON.stringify(template)} is no placeholder format fills: write {} for the next value or {1}..{3} for a given one (no names, no format specs such as {:.2f}); {{ and }} are literal braces` };
  }
  // "{1} has {} pages" filled {} with value1 again; Python refuses to switch numbering, and so does this.
  if (numbering.automatic && numbering.manual) {
    return { ok: false, content: `error: ${JSON.stringify(template)} mixes {} and numbered placeholders: write every placeholder as {} (filled in order) or every one as {1}..{3}` };
  }
  if (missing !== undefined) return { ok: false, content: `error: no value for ${missing.placeholder} in ${JSON.stringify(template)}${missingHint(missing)}` };
  return { ok: true, content: text, data: { value: text } };
}

/**
 * A value as Python's str.format writes it: a plan is Python, and `format("{}", True)` meant
 * "True", as the plan hands echo(True) to a text parameter (plugins/plan/literal-text.ts); JS's
 * String() wrote "true".
 */
function valueText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/**
 * What a model that wrote the placeholder should know: Python's str.format counts from {0}; and a
 * fourth value has no parameter to go in (zod drops a `value4`), so "no value" alone read as if
 * the model had not passed the one it did.
 */
function missingHint({ placeholder, at }: { placeholder: string; at: number }): string {
  if (placeholder === '{0}') return ' (positions start at {1})';
  if (at >= VALUE_COUNT) return ` (format fills at most ${VALUE_COUNT} values, value1..value${VALUE_COUNT}: put the rest into the template's text)`;
  return '';
}

/** `text` as template text that reads as itself: its braces doubled. */
export function escapeTemplateText(text: string): string {
  return text.replace(/[{}]/g, '$&$&');
}

/**
 * The argument of `tool` that format reads as a template, when `tool` is the format tool: a plan
 * that puts a step's value into it (`format("Result: $1")`) escapes the value's braces there, so
 * that the value, like format's own values, goes in verbatim.
 */
export function templateParameterOf(tool: Pick<ToolPlugin, 'name' | 'parameters'>): string | undefined {
  const properties = tool.parameters['properties'] as Record<string, unknown> | undefined;
  return tool.name === FORMAT_TOOL && properties?.['template'] !== undefined ? 'template' : undefined;
}

/**
 * The `format` tool: puts values into a sentence, the last step of a plan that hands the user a
 * finished answer (`4. format("Python and Java have {} pages together.", "$3")`, or with a bare
 * `$3`: the plan reads it as `"$3"`, plugins/plan/step-arguments.ts). Pure string work, so it runs
 * inline and answers at once.
 *
 * @example
 * await runScriptedCall(inlineTool(format), { args: { template: '{} + {} = {}', value1: 1, value2: 2, value3: 3 } }) // result.content === '1 + 2 = 3'
 */
export default definePlugin({
  name: FORMAT_TOOL,
  description: 'Fills a template\'s placeholders with values, as Python\'s str.format (a boolean is True or False): "{}" takes the next value, "{1}".."{3}" a given one; "{{" and "}}" are literal braces. Returns the text.',
  parameters: z.object({
    template: z.string().min(1).max(10_000).describe('The text with placeholders, e.g. "Python and Java have {} pages together."'),
    value1: value(1),
    value2: value(2),
    value3: value(3),
  }),
  consumes: 'call',
  hooks: {
    onEnd: ({ template, value1, value2, value3 }) => formatTemplate(template, [value1, value2, value3]),
  },
});
