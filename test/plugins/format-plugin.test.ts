import { describe, expect, it } from 'vitest';
import format, { formatTemplate } from '../../plugins/format/format-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

const tool = inlineTool(format);

describe('format plugin', () => {
  it('declares a whole-call inline tool whose first argument is the template (plan steps pass arguments by position)', () => {
    expect(tool).toMatchObject({ name: 'format', consumes: 'call' });
    expect(Object.keys(tool.parameters['properties'] as object)).toEqual(['template', 'value1', 'value2', 'value3']);
    expect(tool.parameters).toMatchObject({ required: ['template'] });
  });

  it('fills {} left to right and {n} by position, with numbers and booleans as text', async () => {
    const run = await runScriptedCall(tool, { args: { template: '{} + {} = {}', value1: 1, value2: 2, value3: '3' } });
    expect(run.result).toEqual({ ok: true, content: '1 + 2 = 3', data: { value: '1 + 2 = 3' } });
    expect(formatTemplate('{2} before {1}, {2} again', ['a', true]).content).toBe('True before a, True again');
    expect(formatTemplate('no placeholders', []).content).toBe('no placeholders');
  });

  // A plan is Python, and format's templates are str.format's: "{}".format(True) is "True", and
  // the plan hands echo(True) to a text parameter as "True" (plugins/plan/literal-text.ts). format
  // wrote JSON's "true", so one plan spelt the same literal two ways.
  it("writes a boolean as Python's str.format does, True and False, in a plan step and a direct call", async () => {
    const tools = new Map<string, ToolPlugin>([['format', tool]]);
    const run = await runPlan('1. format("{} is prime: {}, even: {}", 7, True, False)\n2. join()\n', tools);
    expect(planSteps(run)?.[0]).toMatchObject({ ok: true, content: '7 is prime: True, even: False' });
    const direct = await runScriptedCall(tool, { args: { template: 'done: {}', value1: false } });
    expect(direct.result).toEqual({ ok: true, content: 'done: False', data: { value: 'done: False' } });
  });

  it('names the placeholder that has no value instead of leaving it in the answer', () => {
    expect(formatTemplate('{} and {}', ['one'])).toEqual({ ok: false, content: 'error: no value for {} number 2 in "{} and {}"' });
    expect(formatTemplate('{3}', ['a', 'b'])).toMatchObject({ ok: false, content: expect.stringContaining('{3}') });
  });

  // Review 4, finding 8: zod's "Invalid input" gave a model that passed an object nothing to fix.
  it('says what a value must be when it is an object, a list or null', async () => {
    const error = async (value1: unknown) => (await runScriptedCall(tool, { args: { template: '{}', value1 } })).result?.content;
    expect(await error({ x: 1 })).toBe('error: format got invalid arguments: ✖ expected a string, number or boolean, got an object\n  → at value1');
    expect(await error([1])).toContain('expected a string, number or boolean, got a list');
    expect(await error(null)).toContain('expected a string, number or boolean, got null (leave the value out instead)');
  });

  it('tells a model that counts from {0}, as Python does, that positions start at {1}', () => {
    expect(formatTemplate('{0}', ['a'])).toEqual({ ok: false, content: 'error: no value for {0} in "{0}" (positions start at {1})' });
    expect(formatTemplate('{3}', ['a']).content).toBe('error: no value for {3} in "{3}"');
  });

  // A value4 is no parameter (zod drops it): "no value for {} number 4" told a model that had
  // passed value4 nothing it could change.
  it('says that format fills at most three values when a template has more placeholders', async () => {
    const run = await runScriptedCall(tool, { args: { template: '{}, {}, {} and {}', value1: 'a', value2: 'b', value3: 'c', value4: 'd' } });
    expect(run.result?.content).toBe('error: no value for {} number 4 in "{}, {}, {} and {}" (format fills at most 3 values, value1..value3: put the rest into the template\'s text)');
    expect(formatTemplate('{4}', ['a']).content).toBe('error: no value for {4} in "{4}" (format fills at most 3 values, value1..value3: put the rest into the template\'s text)');
  });

  // Review s39: `{total}` and `{:.2f}` stayed in the answer as text, the value silently dropped.
  it('refuses a named placeholder or a format spec, saying what it fills, rather than leaving it unfilled', async () => {
    const run = await runScriptedCall(tool, { args: { template: 'Total: {total}', value1: 5 } });
    expect(run.result).toEqual({
      ok: false,
      content:
        'error: {total} in "Total: {total}" is no placeholder format fills: write {} for the next value or {1}..{3} for a given one (no names, no format specs such as {:.2f}); {{ and }} are literal braces',
    });
    for (const template of ['{:.2f}', '{1:,}', 'a {} b { }', '{0!r}']) expect(formatTemplate(template, [1, 2]).ok).toBe(false);
    // Doubled braces stay literal text, around a name too.
    expect(formatTemplate('{{total}} is {}', [5])).toMatchObject({ ok: true, content: '{total} is 5' });
  });

  it('refuses a template that mixes {} and {n}, as Python does, rather than filling {} with value1 again', async () => {
    // It answered "Python has Python pages".
    const run = await runScriptedCall(tool, { args: { template: '{1} has {} pages', value1: 'Python', value2: 42 } });
    expect(run.result).toEqual({
      ok: false,
      content: 'error: "{1} has {} pages" mixes {} and numbered placeholders: write every placeholder as {} (filled in order) or every one as {1}..{3}',
    });
    expect(formatTemplate('{} and {2}', ['a', 'b']).ok).toBe(false);
    // Literal braces are no placeholders, of either kind.
    expect(formatTemplate('{{}} {1}', ['a'])).toMatchObject({ ok: true, content: '{} a' });
  });

  it('rejects a call without a template at the schema', async () => {
    const run = await runScriptedCall(tool, { args: { value1: 1 } });
    expect(run.result?.ok).toBe(false);
  });
});
