import { z } from 'zod';
import { definePlugin, reject, type PluginContext } from '../kit/define-plugin.ts';
import type { ToolResult } from '../plugin-types.ts';
import { formatPlanTranscript, PlanRun, type PlanToolOptions } from './plan-run.ts';
import { scalarValue } from './step-value.ts';

export { DEFAULT_MAX_PARALLEL_STEPS, DEFAULT_MAX_PLAN_STEPS, type PlanToolOptions } from './plan-run.ts';


const Step = z.object({ index: z.number().int().min(1), tool: z.string(), args: z.array(z.unknown()), raw: z.string() });
const run = (ctx: PluginContext) => ctx.state['run'] as PlanRun;
/** A step's scalar `data.value` (what `$n` stands for), for clients reading `data.steps`. */
const valueOf = (result: ToolResult) => (scalarValue(result) === undefined ? {} : { value: scalarValue(result) });

/**
 * The `plan` tool for LLMCompiler-style plans: each `step` piece is dispatched to its tool as
 * soon as its line is decoded and its `$n` dependencies have results (at most `maxParallelSteps`
 * at once, the rest waiting their turn); a step naming an unknown tool, a missing step or a
 * nested plan, or one past `maxSteps`, rejects the plan at once; a plan of `join()` alone is a
 * tool error that says to write steps. Runs inline: it only orchestrates, and the tools it calls
 * run in their own runtimes.
 *
 * @example
 * registry.set('plan', inlineTool(createPlanTool({ tools: (name) => registry.get(name) })));
 */
export function createPlanTool(options: PlanToolOptions) {
  const joinTool = options.joinTool ?? 'join';
  const name = options.name ?? 'plan';
  // 0 slots would leave every step waiting for ever: refused here, where the gateway starts.
  for (const key of ['maxSteps', 'maxParallelSteps'] as const) {
    const limit = options[key];
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new RangeError(`createPlanTool: ${key} must be a positive integer, got ${limit}`);
  }
  return definePlugin({
    name,
    description: `Runs a plan of numbered tool calls ("1. search(\\"x\\")", "$1" refers to step 1's result), ending with ${joinTool}().`,
    parameters: z.object({ steps: z.array(Step) }),
    consumes: 'step',
    // No clock of its own: each step is bounded by its own tool's limit, and the plan's length by
    // maxSteps. An inline tool's default 30 s counted the waits of steps queued for a slot too:
    // 20 steps two at a time (a 2-CPU host) at a few seconds each failed whole plans.
    limits: { timeoutMs: 0 },
    hooks: {
      onStart: (ctx) => void (ctx.state['run'] = new PlanRun({ ...options, joinTool, planTool: name }, ctx)),
      onPiece(piece, ctx) {
        if (piece.kind !== 'step') return;
        const reason = run(ctx).add(piece);
        return reason === undefined ? undefined : reject(reason);
      },
      async onEnd({ steps }, ctx) {
        try {
          const outcomes = await run(ctx).finish(steps);
          // A model mistake, not a plan that ran: answered ok and empty, it read as a tool round
          // that found nothing, and the model had no word on what to change.
          if (outcomes.length === 0) return { ok: false, content: `error: the plan has no steps besides ${joinTool}(); write the tool calls as numbered steps before ${joinTool}(), or answer without a plan` };
          const summary = outcomes.map((o) => ({ index: o.index, tool: o.tool, ok: o.result.ok, content: o.result.content, ...valueOf(o.result) }));
          return { ok: outcomes.every((o) => o.result.ok), content: formatPlanTranscript(outcomes), data: { steps: summary } };
        } catch (err) {
          return { ok: false, content: `error: ${(err as Error).message}` };
        }
      },
      onAbort: (reason, ctx) => run(ctx).abort(reason),
    },
  });
}
