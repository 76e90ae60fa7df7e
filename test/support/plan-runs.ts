import type { Piece } from '../../parsers/parser-events.ts';
import { createLlmCompilerPlanParser } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall, type ScriptedRun } from '../../plugins/kit/testing.ts';
import { createPlanTool } from '../../plugins/plan/plan-plugin.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';

/** Plan text through the real LLMCompiler parser: the step pieces, and the plan's arguments once it has ended. */
export function parsePlan(text: string): { pieces: Piece[]; args: Record<string, unknown> } {
  const parser = createLlmCompilerPlanParser();
  const events = [...parser.push(text), ...parser.end()];
  const end = events.find((e) => e.type === 'call-end');
  if (end?.type !== 'call-end') throw new Error('plan did not end');
  return { pieces: events.flatMap((e) => (e.type === 'call-piece' ? [e.piece] : [])), args: end.args };
}

/** Plan text through the real parser and the real plan tool over `tools`: its steps handed over as they are decoded (`streamed`), or only whole. */
export function runPlan(text: string, tools: ReadonlyMap<string, ToolPlugin>, streamed = true): Promise<ScriptedRun> {
  const { pieces, args } = parsePlan(text);
  return runScriptedCall(inlineTool(createPlanTool({ tools })), { pieces: streamed ? pieces : [], args });
}

/** Each step's outcome, as the plan tool's result data lists them. */
export function planSteps(run: ScriptedRun): Array<{ ok: boolean; content: string }> | undefined {
  return run.result?.data?.['steps'] as Array<{ ok: boolean; content: string }> | undefined;
}
