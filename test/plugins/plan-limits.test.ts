import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinPluginsConfigSchema } from '../../plugins/builtin-plugins-config.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { createPlanTool, DEFAULT_MAX_PLAN_STEPS, type PlanToolOptions } from '../../plugins/plan/plan-plugin.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { parsePlan } from '../support/plan-runs.ts';

// Review 4, finding 3: one plan could start any number of steps at once and so take every worker
// and queue slot of the tool runtimes it shares with every other request; steps that only waited
// for a worker were then reported "timed out after 5000 ms", and a plan of more than 10 steps
// printed Node's MaxListenersExceededWarning.

const planOf = (n: number, step = (i: number) => `lookup("q${i}")`) =>
  `${Array.from({ length: n }, (_, i) => `${i + 1}. ${step(i + 1)}`).join('\n')}\n${n + 1}. join()\n`;

/**
 * A tool whose calls wait until the test releases them; it logs each `tool.start()` (where a
 * runtime's time limit starts to run) and each abort.
 */
function gatedTool() {
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const inner = inlineTool(
    definePlugin({
      name: 'lookup',
      description: 'test tool',
      parameters: z.object({ query: z.string() }),
      consumes: 'call',
      hooks: {
        async onEnd({ query }, ctx) {
          await new Promise<void>((resolve) => gates.set(query, resolve));
          ctx.signal.throwIfAborted();
          return `result(${query})`;
        },
        onAbort: (reason) => void log.push(`abort: ${reason}`),
      },
    }),
  );
  const tool: ToolPlugin = {
    ...inner,
    start(ctx) {
      log.push(`start ${ctx.callId}`);
      return inner.start(ctx);
    },
  };
  return { tool, log, release: (query: string) => gates.get(query)?.(), waiting: () => [...gates.keys()] };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await tick();
};

function startPlan(tool: ToolPlugin, options: Partial<PlanToolOptions> = {}) {
  const plan = inlineTool(createPlanTool({ tools: new Map([[tool.name, tool]]), ...options }));
  return plan.start({ callId: 'call_plan', signal: new AbortController().signal, emit: () => {} });
}

describe('plan plugin: steps running at once', () => {
  it('starts at most maxParallelSteps steps; the others start, in order, as slots free', async () => {
    const lookup = gatedTool();
    const execution = startPlan(lookup.tool, { maxParallelSteps: 2 });
    const { pieces, args } = parsePlan(planOf(4));
    for (const piece of pieces) expect(await execution.piece(piece)).toBeUndefined();
    await ticks();
    // Steps 3 and 4 wait in the plan: their tool was not even started, so no time limit runs for them.
    expect(lookup.log).toEqual(['start call_plan-step1', 'start call_plan-step2']);
    lookup.release('q2');
    await ticks();
    expect(lookup.log).toEqual(['start call_plan-step1', 'start call_plan-step2', 'start call_plan-step3']);
    const ending = execution.end(args);
    for (const query of ['q1', 'q3']) {
      lookup.release(query);
      await ticks();
    }
    lookup.release('q4');
    const result = await ending;
    expect(result.ok).toBe(true);
    expect(lookup.log).toEqual(['start call_plan-step1', 'start call_plan-step2', 'start call_plan-step3', 'start call_plan-step4']);
    expect((result.data?.['steps'] as Array<{ content: string }>).map((s) => s.content)).toEqual(['result(q1)', 'result(q2)', 'result(q3)', 'result(q4)']);
  });

  it('never starts a waiting step once the plan is aborted', async () => {
    const lookup = gatedTool();
    const execution = startPlan(lookup.tool, { maxParallelSteps: 1 });
    const { pieces } = parsePlan(planOf(3));
    for (const piece of pieces) await execution.piece(piece);
    await ticks();
    execution.abort('request aborted');
    lookup.release('q1');
    await ticks();
    expect(lookup.log).toEqual(['start call_plan-step1', 'abort: request aborted']);
  });

  it('runs a plan of more than 10 steps without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const lookup = gatedTool();
      // Every step running at once: each one's execution listens on the plan's signal.
      const execution = startPlan(lookup.tool, { maxParallelSteps: 12 });
      const { pieces, args } = parsePlan(planOf(12));
      for (const piece of pieces) await execution.piece(piece);
      await ticks();
      const ending = execution.end(args);
      for (const query of lookup.waiting()) lookup.release(query);
      expect((await ending).ok).toBe(true);
      await ticks();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('plan plugin: steps per plan', () => {
  it('rejects the plan at the step past maxSteps, saying so, and aborts the steps it started', async () => {
    const lookup = gatedTool();
    const { pieces, args } = parsePlan(planOf(4));
    const plan = inlineTool(createPlanTool({ tools: new Map([['lookup', lookup.tool]]), maxSteps: 3, maxParallelSteps: 3 }));
    const run = await runScriptedCall(plan, { pieces, args });
    expect(run.verdicts.at(-1)).toEqual({ verdict: 'reject', reason: 'step 4: a plan may have at most 3 steps (join() aside); write a shorter plan' });
    expect(lookup.log.filter((line) => line.startsWith('abort'))).toHaveLength(3);
  });

  it('reports the same when the plan arrives whole, and starts none of its steps', async () => {
    const lookup = gatedTool();
    const plan = inlineTool(createPlanTool({ tools: new Map([['lookup', lookup.tool]]), maxSteps: 3 }));
    const run = await runScriptedCall(plan, { args: parsePlan(planOf(4)).args });
    expect(run.result).toEqual({ ok: false, content: 'error: step 4: a plan may have at most 3 steps (join() aside); write a shorter plan' });
    await ticks();
    expect(lookup.log).toEqual([]);
  });

  it(`takes up to ${DEFAULT_MAX_PLAN_STEPS} steps by default`, async () => {
    const echo = inlineTool(definePlugin({ name: 'lookup', description: 'echo', parameters: z.object({ query: z.string() }), consumes: 'call', hooks: { onEnd: ({ query }) => query } }));
    const plan = inlineTool(createPlanTool({ tools: new Map([['lookup', echo]]) }));
    const full = parsePlan(planOf(DEFAULT_MAX_PLAN_STEPS));
    expect((await runScriptedCall(plan, full)).result?.ok).toBe(true);
    const over = parsePlan(planOf(DEFAULT_MAX_PLAN_STEPS + 1));
    expect((await runScriptedCall(plan, over)).rejected).toMatch(new RegExp(`^step ${DEFAULT_MAX_PLAN_STEPS + 1}: a plan may have at most ${DEFAULT_MAX_PLAN_STEPS} steps`));
  });

  it('refuses limits that are not positive integers when the tool is made', () => {
    const tools = new Map<string, ToolPlugin>();
    expect(() => createPlanTool({ tools, maxParallelSteps: 0 })).toThrow(/maxParallelSteps must be a positive integer/);
    expect(() => createPlanTool({ tools, maxSteps: 1.5 })).toThrow(/maxSteps must be a positive integer/);
  });
});

describe('plan plugin: a step literal nested too deep', () => {
  const echo = inlineTool(definePlugin({ name: 'echo', description: 'echo', parameters: z.object({ value: z.unknown() }), consumes: 'call', hooks: { onEnd: () => 'echoed' } }));
  const plan = inlineTool(createPlanTool({ tools: new Map([['echo', echo]]) }));
  const deepPlan = `1. echo(${'['.repeat(20_000)}1${']'.repeat(20_000)})\n2. join()\n`;
  const reason = 'step 1: an argument nests lists, tuples or dicts deeper than 256 levels';

  it('rejects the plan at that step with the reason (it used to reach the tool as its text)', async () => {
    expect((await runScriptedCall(plan, parsePlan(deepPlan))).rejected).toBe(reason);
    expect((await runScriptedCall(plan, { args: parsePlan(deepPlan).args })).result).toEqual({ ok: false, content: `error: ${reason}` });
  });

  it('runs a step as deep as the limit', async () => {
    const limit = `1. echo(${'['.repeat(256)}1${']'.repeat(256)})\n2. join()\n`;
    expect((await runScriptedCall(plan, parsePlan(limit))).result?.ok).toBe(true);
  });
});

describe('plan plugin settings (--plugins)', () => {
  it('takes maxSteps and maxParallelSteps, or false', () => {
    expect(builtinPluginsConfigSchema.parse({}).plan).toEqual({});
    expect(builtinPluginsConfigSchema.parse({ plan: { maxSteps: 8, maxParallelSteps: 2 } }).plan).toEqual({ maxSteps: 8, maxParallelSteps: 2 });
    expect(builtinPluginsConfigSchema.parse({ plan: false }).plan).toBe(false);
    expect(() => builtinPluginsConfigSchema.parse({ plan: { maxParallelSteps: 0 } })).toThrow();
    expect(() => builtinPluginsConfigSchema.parse({ plan: { maxStep: 8 } })).toThrow();
  });
});

describe('the plan tool has no clock of its own', () => {
  it('leaves time limits to its steps (an inline default of 30 s counted the waits for a slot and failed whole plans)', () => {
    expect(createPlanTool({ tools: () => undefined }).limits).toEqual({ timeoutMs: 0 });
  });
});
