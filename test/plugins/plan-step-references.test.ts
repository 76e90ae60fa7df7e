import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { planStepDependencies } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { stepReferences } from '../../parsers/formats/plan-step-reference.ts';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { ScriptedRun } from '../../plugins/kit/testing.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

const echo = inlineTool(definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
const pair = inlineTool(
  definePlugin({ name: 'pair', description: 'test', parameters: z.object({ a: z.string(), b: z.string() }), consumes: 'call', hooks: { onEnd: ({ a, b }) => `${a}|${b}` } }),
);
const tools = new Map<string, ToolPlugin>([['echo', echo], ['pair', pair], ['calculator', inlineTool(calculator)]]);

const planRun = (text: string, streamed = true) => runPlan(text, tools, streamed);
const contents = (outcome: ScriptedRun) => planSteps(outcome)!.map((s) => s.content);

// Review s40: the parser read `${1` as a reference to step 1 (the step waited for it) but the
// executor's pattern wanted the closing brace, so the tool got the text `${1` itself.
describe('plan step references: one definition for the parser and the executor', () => {
  it('substitutes ${n with its closing brace missing, as ${n}, in a string, a keyword and a bare argument', async () => {
    const plan = [
      '1. echo("a")',
      '2. echo("${1 and ${1} and $1")',
      '3. echo(text=${1)',
      '4. pair("x", ${1)',
      '5. calculator("2+2")',
      '6. calculator(${5 * 2)',
      '7. join()',
      '',
    ].join('\n');
    for (const streamed of [true, false]) {
      const run = await planRun(plan, streamed);
      expect(run.result?.ok).toBe(true);
      expect(contents(run)).toEqual(['a', 'a and a and a', 'a', 'x|a', '4', '8']);
    }
  });

  it('leaves a brace that follows a bare $n, and a ${n naming no earlier step, as written', async () => {
    const run = await planRun('1. echo("a")\n2. echo("{$1} costs ${500 or ${2")\n3. join()\n');
    expect(contents(run)).toEqual(['a', '{a} costs ${500 or ${2']);
  });

  it('never leaves a reference to a step it waited for in the text the tool gets', async () => {
    const piece = fc.constantFrom('$1', '${1', '${1}', '$2', '${2', '$', '{', '}', '1', 'x', ' ', '$$');
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 12 }).map((p) => p.join('')), async (text) => {
        const line = `3. echo("${text}")`;
        const run = await planRun(`1. echo("A")\n2. echo("B")\n${line}\n4. join()\n`);
        const got = contents(run)[2]!;
        const waited = planStepDependencies({ kind: 'step', index: 3, tool: 'echo', args: [text], raw: line });
        for (const { step } of stepReferences(got)) expect(waited).not.toContain(step);
        // And it waited for each step it substituted, nothing else.
        expect(waited).toEqual([1, 2].filter((n) => [...stepReferences(text)].some((r) => r.step === n)));
      }),
      { numRuns: 150 },
    );
  });
});

// Review s40: a plan of only `join()` answered ok with an empty observation.
describe('a plan with no steps besides join()', () => {
  it('is a tool error that tells the model to write steps, streamed and whole', async () => {
    for (const plan of ['1. join()\n', 'Thought: nothing to look up.\n1. join()<END_OF_PLAN>']) {
      for (const streamed of [true, false]) {
        const run = await planRun(plan, streamed);
        expect(run.rejected).toBeUndefined();
        expect(run.result).toEqual({
          ok: false,
          content: 'error: the plan has no steps besides join(); write the tool calls as numbered steps before join(), or answer without a plan',
        });
      }
    }
  });
});

// A step's value went into a later step as text only: `repeat("ab", $1)` gave a parameter typed
// integer the string "3" (zod: "expected number, received string"), and a boolean value read
// "true" in text where the model's own literal `True` reads "True" (literalAsText).
describe('a step value in a later step', () => {
  const repeat = inlineTool(
    definePlugin({ name: 'repeat', description: 'test', parameters: z.object({ text: z.string(), times: z.number().int() }), consumes: 'call', hooks: { onEnd: ({ text, times }) => text.repeat(times) } }),
  );
  const valued = (name: string, value: unknown, content: string) =>
    inlineTool(definePlugin({ name, description: 'test', parameters: z.object({}), consumes: 'call', hooks: { onEnd: () => ({ ok: true, content, data: { value } }) } }));
  const flag = inlineTool(definePlugin({ name: 'flag', description: 'test', parameters: z.object({ on: z.boolean() }), consumes: 'call', hooks: { onEnd: ({ on }) => (on ? 'on' : 'off') } }));
  const typed = new Map<string, ToolPlugin>([
    ...tools,
    ['repeat', repeat],
    ['flag', flag],
    ['yes', valued('yes', true, 'it is so')],
    ['none', valued('none', null, 'nothing found')],
    ['dict', valued('dict', { a: 1 }, 'a table')],
    ['ten', valued('ten', 10, 'ten of them')],
  ]);

  it('is the number or boolean itself where a whole argument is the reference and its parameter takes one', async () => {
    const plan = ['1. calculator("2+1")', '2. repeat("ab", $1)', '3. repeat(text="c", times=${1})', '4. yes()', '5. flag($4)', '6. ten()', '7. repeat("d", $6)', '8. join()', ''].join('\n');
    for (const streamed of [true, false]) {
      const run = await runPlan(plan, typed, streamed);
      expect(contents(run)).toEqual(['3', 'ababab', 'ccc', 'it is so', 'on', 'ten of them', 'dddddddddd']);
    }
  });

  it('is text inside text: a boolean in Python spelling, as the plan writes it; no scalar value (null, an object) the observation', async () => {
    const run = await runPlan(['1. yes()', '2. none()', '3. dict()', '4. ten()', '5. echo("$1 / $2 / $3 / $4")', '6. echo($4)', '7. join()', ''].join('\n'), typed);
    expect(contents(run)).toEqual(['it is so', 'nothing found', 'a table', 'ten of them', 'True / nothing found / a table / 10', '10']);
  });

  it('is left as text, for the tool to refuse, where it is no number its parameter can take', async () => {
    const run = await runPlan(['1. echo("many")', '2. repeat("x", $1)', '3. join()', ''].join('\n'), typed);
    expect(planSteps(run)![1]).toMatchObject({ ok: false, content: expect.stringContaining('expected number, received string') });
  });
});
