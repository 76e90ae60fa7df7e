import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

const tool = inlineTool(calculator);
const call = (expression: string) => runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['expression'], value: expression }], args: { expression } });
const echo = inlineTool(definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
const flag = inlineTool(definePlugin({ name: 'flag', description: 'test', parameters: z.object({ on: z.boolean() }), consumes: 'call', hooks: { onEnd: ({ on }) => `on is ${typeof on} ${on}` } }));
const tools = new Map<string, ToolPlugin>([['echo', echo], ['flag', flag], ['calculator', tool]]);

// A comparison's data.value was the text "true": a plan's `$1` read "true" where every other
// boolean step value (and the plan's own literal) reads True, as Python writes it.
describe('calculator comparisons', () => {
  it('answer in the calculator\'s own syntax, with data.value a boolean', async () => {
    expect((await call('2 > 1')).result).toEqual({ ok: true, content: 'true', data: { expression: '2 > 1', value: true } });
    expect((await call('2 == 3')).result).toEqual({ ok: true, content: 'false', data: { expression: '2 == 3', value: false } });
    // A matrix of booleans or a string is no one boolean: its text stays the value.
    expect((await call('[1, 2] > 1')).result?.data).toEqual({ expression: '[1, 2] > 1', value: '[false, true]' });
    expect((await call('"true"')).result?.data).toEqual({ expression: '"true"', value: '"true"' });
  });

  it('reach a later plan step as Python\'s True/False, which the calculator reads back', async () => {
    const run = await runPlan('1. calculator("2 > 1")\n2. echo("on: $1")\n3. flag($1)\n4. calculator("$1 and not False")\n5. join()\n', tools, true);
    expect(planSteps(run)!.map((s) => s.content)).toEqual(['true', 'on: True', 'on is boolean true', 'true']);
  });
});
