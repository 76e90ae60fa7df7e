import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import format from '../../plugins/format/format-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { stepArguments } from '../../plugins/plan/step-arguments.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { planSteps, runPlan } from '../support/plan-runs.ts';

/** Step 1's value is 42, as a search's page count would be. */
const count = inlineTool(
  definePlugin({ name: 'count', description: 'test', parameters: z.object({ q: z.string() }), consumes: 'call', hooks: { onEnd: () => ({ ok: true, content: '42 pages', data: { value: 42 } }) } }),
);
const echo = inlineTool(definePlugin({ name: 'echo', description: 'test', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
const tools = new Map<string, ToolPlugin>([['count', count], ['echo', echo], ['format', inlineTool(format)], ['calculator', inlineTool(calculator)]]);

/** Runs `1. count("x")`, then `line` as step 2, through the real plan parser and plan tool: step 2's result. */
async function secondStep(line: string, streamed = true) {
  const run = await runPlan(`1. count("x")\n2. ${line}\n3. join()\n`, tools, streamed);
  return planSteps(run)?.[1] ?? run.result;
}

describe('a bare $1 in format no longer becomes the whole template', () => {
  it('fills the template with the step value a bare $n stands for, as a quoted "$n" does', async () => {
    const sentence = { ok: true, content: 'Python and Java have 42 pages together.' };
    expect(await secondStep('format("Python and Java have {} pages together.", "$1")')).toMatchObject(sentence);
    expect(await secondStep('format("Python and Java have {} pages together.", $1)')).toMatchObject(sentence);
    expect(await secondStep('format("Python and Java have {} pages together.", ${1})')).toMatchObject(sentence);
    expect(await secondStep('format("Python and Java have {} pages together.", $1)', false)).toMatchObject(sentence);
    expect(await secondStep("format('{} and {}', $1, \"$1!\")")).toMatchObject({ ok: true, content: '42 and 42!' });
    expect(await secondStep('format($1)')).toMatchObject({ ok: true, content: '42' });
  });

  it('leaves text that is still no list of literals as one argument: an expression, a dollar amount', async () => {
    expect(await secondStep('calculator($1 * 2)')).toMatchObject({ ok: true, content: '84' });
    expect(await secondStep('echo(laptops under $500)')).toMatchObject({ ok: true, content: 'laptops under $500' });
  });

  it('quotes only references outside string literals, and never splits a real string argument', () => {
    const args = (raw: string, parsed: unknown[]) => stepArguments({ raw, args: parsed });
    expect(args('2. format("say \\"{}\\", $1", $1)', ['"say \\"{}\\", $1", $1'])).toEqual(['say "{}", $1', '$1']);
    expect(args('2. format("""a ", $1 """, $1)', ['"""a ", $1 """, $1'])).toEqual(['a ", $1 ', '$1']);
    // A string that merely looks like an argument list came from the model as one string: kept.
    expect(args(`2. echo('"a {}", $1')`, ['"a {}", $1'])).toEqual(['"a {}", $1']);
    expect(args('2. echo("a", "b")  # two', ['a', 'b'])).toEqual(['a', 'b']);
  });
});
