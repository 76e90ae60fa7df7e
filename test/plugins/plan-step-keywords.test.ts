import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmCompilerPlanParser } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import format from '../../plugins/format/format-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { createPlanTool } from '../../plugins/plan/plan-plugin.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';

const echo = inlineTool(definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
const tools = new Map<string, ToolPlugin>([['echo', echo], ['format', inlineTool(format)], ['calculator', inlineTool(calculator)]]);

/** Runs plan text through the real plan parser and plan tool, streamed (pieces) or whole. */
async function runPlan(text: string, streamed = true) {
  const parser = createLlmCompilerPlanParser();
  const events = [...parser.push(text), ...parser.end()];
  const pieces = events.flatMap((e) => (e.type === 'call-piece' ? [e.piece] : []));
  const end = events.find((e) => e.type === 'call-end');
  if (end?.type !== 'call-end') throw new Error('plan did not end');
  return runScriptedCall(inlineTool(createPlanTool({ tools })), { pieces: streamed ? pieces : [], args: end.args });
}
const contents = (run: Awaited<ReturnType<typeof runPlan>>) => (run.result?.data?.['steps'] as Array<{ content: string }>).map((s) => s.content);

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
      const run = await runPlan(plan, streamed);
      expect(run.result?.ok).toBe(true);
      expect(contents(run)).toEqual(['4', 'a, b = c', 'x and 4', '8', '4 {}']);
    }
  });

  it('rejects a keyword the tool has no parameter for, or one given twice, at that step', async () => {
    expect((await runPlan('1. calculator(expr="2+2")\n2. join()\n')).rejected).toBe('step 1: calculator has no parameter "expr" (it takes expression)');
    expect((await runPlan('1. echo("a", text="b")\n2. join()\n')).rejected).toBe('step 1: echo got "text" twice');
  });

  it('leaves text without a top-level keyword as before: a comparison, a string holding "="', async () => {
    expect(contents(await runPlan('1. calculator(2 == 2)\n2. echo("k=v")\n3. calculator(2 >= 1)\n4. join()\n'))).toEqual(['true', 'k=v', 'true']);
  });
});

// Review s39: a second step with a number already used was dropped without a word: it never ran.
describe('plan steps numbered twice', () => {
  it('rejects a different step with a number already used, streamed and whole', async () => {
    const plan = '1. echo("a")\n1. echo("b")\n2. echo("$1")\n3. join()\n';
    expect((await runPlan(plan)).rejected).toBe('step 1: the plan has two steps numbered 1; number each step once');
    expect((await runPlan(plan, false)).result).toEqual({ ok: false, content: 'error: step 1: the plan has two steps numbered 1; number each step once' });
  });

  it('still takes the steps seen as pieces again at the end, and a join numbered like a step', async () => {
    const run = await runPlan('1. echo("a")\n2. echo("$1!")\n2. join()\n');
    expect(run.result?.ok).toBe(true);
    expect(contents(run)).toEqual(['a', 'a!']);
  });
});
