import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import format from '../../plugins/format/format-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { ScriptedRun } from '../../plugins/kit/testing.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

const echo = inlineTool(definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
const tools = new Map<string, ToolPlugin>([['echo', echo], ['format', inlineTool(format)], ['calculator', inlineTool(calculator)]]);

const planRun = (text: string, streamed = true) => runPlan(text, tools, streamed);
const contents = (outcome: ScriptedRun) => planSteps(outcome)!.map((s) => s.content);

// Review s39: keyword arguments reached the tool as the whole text: calculator(expression="2+2")
// evaluated the assignment `expression="2+2"` and answered "2+2" as a success.
describe('plan steps with keyword arguments', () => {
  it('maps name=value onto the parameter of that name, after positional ones, with $n substituted', async () => {
    const plan = [
      '1. calculator(expression="2+2")',
      '2. echo(text="a, b = c")',
      '3. format("{} and {}", value2=$1, value1="x",)',
      '4. calculator(expression=$1 * 2)',
      '5. format(template="{} {{}}", value1=${1})',
      '6. join()',
      '',
    ].join('\n');
    for (const streamed of [true, false]) {
      const run = await planRun(plan, streamed);
      expect(run.result?.ok).toBe(true);
      expect(contents(run)).toEqual(['4', 'a, b = c', 'x and 4', '8', '4 {}']);
    }
  });

  it('rejects a keyword the tool has no parameter for, or one given twice, at that step', async () => {
    expect((await planRun('1. calculator(expr="2+2")\n2. join()\n')).rejected).toBe('step 1: calculator has no parameter "expr" (it takes expression)');
    expect((await planRun('1. echo("a", text="b")\n2. join()\n')).rejected).toBe('step 1: echo got "text" twice');
  });

  it('leaves text without a top-level keyword as before: a comparison, a string holding "="', async () => {
    expect(contents(await planRun('1. calculator(2 == 2)\n2. echo("k=v")\n3. calculator(2 >= 1)\n4. join()\n'))).toEqual(['true', 'k=v', 'true']);
  });
});

// Review s39: a second step with a number already used was dropped without a word: it never ran.
describe('plan steps numbered twice', () => {
  it('rejects a different step with a number already used, streamed and whole', async () => {
    const plan = '1. echo("a")\n1. echo("b")\n2. echo("$1")\n3. join()\n';
    expect((await planRun(plan)).rejected).toBe('step 1: the plan has two steps numbered 1; number each step once');
    expect((await planRun(plan, false)).result).toEqual({ ok: false, content: 'error: step 1: the plan has two steps numbered 1; number each step once' });
  });

  it('still takes the steps seen as pieces again at the end, and a join numbered like a step', async () => {
    const run = await planRun('1. echo("a")\n2. echo("$1!")\n2. join()\n');
    expect(run.result?.ok).toBe(true);
    expect(contents(run)).toEqual(['a', 'a!']);
  });
});

// Review s48: a number or boolean literal given to a text parameter failed the step with zod's
// "expected string, received number", so `calculator(5)` or `echo(42)`, which LLMCompiler's
// Python tools take, was an error the model could only guess at.
describe('plan steps with a literal number or boolean for a text parameter', () => {
  it('gives the tool its text, positional or by keyword, as Python writes it', async () => {
    const run = await planRun('1. calculator(5)\n2. echo(2.5)\n3. echo(text=-3)\n4. echo(True)\n5. format("{} and {}", 7, False)\n6. join()\n');
    expect(run.result?.ok).toBe(true);
    // format's values take numbers and booleans themselves: left as they are, and format writes the
    // boolean as Python's str.format does (it wrote JSON's "false" beside echo's "True").
    expect(contents(run)).toEqual(['5', '2.5', '-3', 'True', '7 and False']);
  });

  it('leaves what has no single text: None, a list, an integer past 2^53', async () => {
    const run = await planRun('1. echo(None)\n2. echo([1, 2])\n3. echo(12345678901234567890)\n4. join()\n');
    expect(planSteps(run)!.map((s) => s.ok)).toEqual([false, false, false]);
    expect(contents(run)[2]).toMatch(/expected string, received number/);
  });
});
