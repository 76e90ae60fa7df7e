import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import format, { formatTemplate } from '../../plugins/format/format-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

/** Says its text back, as its scalar value: what `$n` stands for. */
const echo = inlineTool(
  definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => ({ ok: true, content: text, data: { value: text } }) } }),
);
const tools = new Map<string, ToolPlugin>([['echo', echo], ['format', inlineTool(format)]]);

/** Runs `plan` (its lines, then join) through the real plan parser and plan tool: the last step's result. */
async function lastStep(plan: string[]) {
  const lines = plan.map((line, i) => `${i + 1}. ${line}\n`).join('');
  const run = await runPlan(`${lines}${plan.length + 1}. join()\n`, tools);
  return planSteps(run)?.at(-1) ?? run.result;
}

describe('format substitutes in one pass: a value goes in verbatim, braces and all', () => {
  it('never reads a {} or {n} inside a value as a placeholder', () => {
    expect(formatTemplate('Result: {}', ['set() is {}'])).toMatchObject({ ok: true, content: 'Result: set() is {}' });
    expect(formatTemplate('{1} then {2}', ['{2}', 'b'])).toMatchObject({ ok: true, content: '{2} then b' });
    expect(formatTemplate('{} and {}', ['{}', 'x'])).toMatchObject({ ok: true, content: '{} and x' });
    expect(formatTemplate('{}', ['$& $1'])).toMatchObject({ ok: true, content: '$& $1' });
  });

  it('reads {{ and }} as literal braces, as Python does, so a template can say "{}" itself', () => {
    expect(formatTemplate('set() is {{}}, len {}', [0])).toMatchObject({ ok: true, content: 'set() is {}, len 0' });
    expect(formatTemplate('{{{}}}', ['x'])).toMatchObject({ ok: true, content: '{x}' });
    expect(formatTemplate('{{1}}', [])).toMatchObject({ ok: true, content: '{1}' });
  });

  // A step's value once went into format's template as template text: its {} became a placeholder
  // ("error: no value for {} number 1") or took the value meant for the template's own {}.
  it('puts a step value that holds braces into the template verbatim, through a plan', async () => {
    expect(await lastStep(['echo("set() is {}")', 'format("Result: $1")'])).toMatchObject({ ok: true, content: 'Result: set() is {}' });
    expect(await lastStep(['echo("{} and {1}")', 'format("$1 / {}", "x")'])).toMatchObject({ ok: true, content: '{} and {1} / x' });
    expect(await lastStep(['echo("a {{b}}")', 'format($1)'])).toMatchObject({ ok: true, content: 'a {{b}}' });
    // As a value, it was always verbatim; a $2 inside step 1's value is text, not a reference.
    expect(await lastStep(['echo("{} $2")', 'echo("two")', 'format("{} | {}", "$1", "${2}")'])).toMatchObject({ ok: true, content: '{} $2 | two' });
    // Only format's template is escaped: another tool gets the value as it is.
    expect(await lastStep(['echo("{}")', 'echo("got $1")'])).toMatchObject({ ok: true, content: 'got {}' });
  });
});
