import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { planStepDependencies, type PlanStep } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { replaceStepReferences } from '../../parsers/formats/plan-step-reference.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult } from '../plugin-types.ts';
import { escapeTemplateText, templateParameterOf } from '../format/format-plugin.ts';
import { stepCall } from './keyword-arguments.ts';
import { literalAsText } from './literal-text.ts';
import { stepValue, typedStepValue } from './step-value.ts';

export interface PlanToolOptions {
  /** The tools steps may call (the gateway's registry, or a lookup into it). */
  tools: ToolResolver;
  /** Default `plan`, the LLMCompiler plan parser's default `toolName`. */
  name?: string;
  /** The step that ends a plan; default `join`. */
  joinTool?: string;
  /** Steps a plan may have, `join` aside; the next one rejects the plan. Default DEFAULT_MAX_PLAN_STEPS. */
  maxSteps?: number;
  /** Steps of one plan running at once; the others wait in the plan. Default DEFAULT_MAX_PARALLEL_STEPS. */
  maxParallelSteps?: number;
}

/**
 * LLMCompiler plans are a handful of steps (a few lookups, a computation, an answer); 20 leaves
 * room for a wide fan-out, and bounds the tool calls one model answer can order, which all share
 * the gateway's tool runtimes with every other request.
 */
export const DEFAULT_MAX_PLAN_STEPS = 20;

/**
 * 4 steps at once runs a plan's usual fan-out without waiting. Fewer on a machine with fewer CPUs:
 * the thread runtime has one worker per CPU, and a step's time limit runs while its hooks wait in
 * that pool's queue, so more steps at once than workers had steps that never ran for their limit
 * reported "timed out after 5000 ms" (and took every worker and queue slot from other requests).
 * Never fewer than 2: running independent steps side by side is what a plan is for.
 */
export const DEFAULT_MAX_PARALLEL_STEPS = Math.max(2, Math.min(4, availableParallelism()));

/** Finds the tool a plan step names. */
export type ToolResolver = ReadonlyMap<string, ToolPlugin> | ((name: string) => ToolPlugin | undefined);

/** A plan step as the parser emits it (`kind` is optional so the decoded `steps` argument fits too). */
export type PlanStepInput = Omit<PlanStep, 'kind'> & { kind?: 'step' };

export interface StepOutcome {
  index: number;
  tool: string;
  raw: string;
  result: ToolResult;
}

/**
 * One plan's execution: each step starts the moment it is added and the steps it references
 * have results, so independent steps run in parallel while the model is still writing the plan,
 * at most `maxParallelSteps` at once.
 * A step's positional arguments become the tool's arguments in the order of its JSON Schema
 * `properties` (`search("x")` → `{ query: "x" }`), keyword ones by name (`stepCall`); `$n` / `${n}`
 * inside them (and `${n`, its brace missing), or bare among them (`stepArguments`), are replaced by
 * step n's value (`stepValue`), or where a whole argument is one, its number or boolean (`typedStepValue`).
 * A step whose dependency failed is skipped, with that as its error.
 */
export class PlanRun {
  private readonly ctx: Pick<ToolCallContext, 'callId' | 'signal' | 'emit'>;
  readonly #steps = new Map<number, { step: PlanStepInput; outcome: Promise<StepOutcome> }>();
  readonly #running = new Set<ToolExecution>();
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal;
  readonly #resolve: (name: string) => ToolPlugin | undefined;
  readonly #joinTool: string;
  readonly #planTool: string;
  readonly #maxSteps: number;
  /** Held by each step from tool.start() to its result; a step waits for one before it starts. */
  readonly #slots: BoundedQueue;

  /** `planTool` is the plan tool's own name: a step may not start a nested plan. */
  constructor(
    options: { tools: ToolResolver; joinTool: string; planTool: string; maxSteps?: number; maxParallelSteps?: number },
    ctx: Pick<ToolCallContext, 'callId' | 'signal' | 'emit'>,
  ) {
    this.ctx = ctx;
    const { tools } = options;
    this.#resolve = (name) => (typeof tools === 'function' ? tools(name) : tools.get(name));
    this.#joinTool = options.joinTool;
    this.#planTool = options.planTool;
    this.#maxSteps = options.maxSteps ?? DEFAULT_MAX_PLAN_STEPS;
    // Every step waits at most once, so the queue never refuses one.
    this.#slots = new BoundedQueue(options.maxParallelSteps ?? DEFAULT_MAX_PARALLEL_STEPS, this.#maxSteps, () => new Error('too many plan steps'));
    this.#signal = AbortSignal.any([ctx.signal, this.#controller.signal]);
    // Each step listens on it while it waits for a slot, then its execution does (and whatever its
    // hooks hand the signal to): at most maxSteps and their calls, not a leak, and Node's warning
    // past 10 went to the gateway's stderr for any plan of more than 10 steps.
    setMaxListeners(0, this.#signal);
  }

  /** Dispatches a step (the same step again is ignored); returns why the plan is invalid, if it is. */
  add(step: PlanStepInput): string | undefined {
    if (step.tool === this.#joinTool) return undefined;
    // The same step again (finish() re-adds the steps seen as pieces) is no new step; another step
    // with its number used to be dropped without a word: it never ran, and no observation said so.
    const seen = this.#steps.get(step.index)?.step;
    if (seen !== undefined) return seen.raw === step.raw ? undefined : `step ${step.index}: the plan has two steps numbered ${step.index}; number each step once`;
    if (this.#steps.size >= this.#maxSteps) return `step ${step.index}: a plan may have at most ${this.#maxSteps} steps (${this.#joinTool}() aside); write a shorter plan`;
    if (step.tool === this.#planTool) return `step ${step.index}: plans cannot nest; write the inner plan's steps into this plan`;
    const tool = this.#resolve(step.tool);
    if (tool === undefined) return `step ${step.index}: unknown tool "${step.tool}"`;
    const deps = planStepDependencies({ ...step, kind: 'step' }, this.#joinTool);
    // Only an earlier number can be a reference: `$0`, the step's own or a later number ("under
    // $500") stays as written, as LLMCompiler's own resolver leaves an index it has no result for.
    const missing = deps.find((n) => !this.#steps.has(n));
    if (missing !== undefined) return `step ${step.index} refers to $${missing}, which is not a step of this plan`;
    const properties = (tool.parameters['properties'] as Record<string, unknown> | undefined) ?? {};
    const names = Object.keys(properties);
    const call = stepCall(step);
    if ('problem' in call) return `step ${step.index}: ${call.problem}`;
    // A step's value goes into format's template as text, as format's own values go in: its braces
    // ("set() is {}") must not become placeholders, nor leave format short of values.
    const template = templateParameterOf(tool);
    if (call.positional.length > names.length) return `step ${step.index}: ${step.tool} takes ${names.length} argument(s) (${names.join(', ')}), got ${call.positional.length}`;
    const args: Array<[string, unknown]> = call.positional.map((arg, i) => [names[i]!, literalAsText(properties[names[i]!], arg)]);
    for (const [name, arg] of call.keywords) {
      if (!names.includes(name)) return `step ${step.index}: ${step.tool} has no parameter "${name}" (it takes ${names.join(', ')})`;
      if (args.some(([given]) => given === name)) return `step ${step.index}: ${step.tool} got "${name}" twice`;
      args.push([name, literalAsText(properties[name], arg)]);
    }

    const outcome = Promise.all(deps.map((n) => this.#steps.get(n)!.outcome)).then(async (before): Promise<StepOutcome> => {
      const failed = before.find((o) => !o.result.ok);
      const result = failed
        ? { ok: false, content: `error: skipped because step ${failed.index} failed` }
        : await this.#run(tool, step, () => {
            const results = new Map(before.map((o) => [o.index, o.result]));
            return Object.fromEntries(args.map(([name, arg]) => [name, typedStepValue(properties[name], arg, results) ?? substitute(arg, before, name === template ? escapeTemplateText : verbatim)]));
          });
      this.ctx.emit({ type: 'unit-done', detail: `step ${step.index} ${step.tool}: ${result.ok ? 'ok' : 'failed'}` });
      return { index: step.index, tool: step.tool, raw: step.raw, result };
    });
    this.#steps.set(step.index, { step, outcome });
    return undefined;
  }

  /** Adds the steps not seen as pieces, then awaits every step, in plan order. */
  async finish(steps: readonly PlanStepInput[]): Promise<StepOutcome[]> {
    for (const step of steps) {
      const reason = this.add(step);
      if (reason === undefined) continue;
      // As a rejected piece aborts the plan: the steps already started are not left running.
      this.abort(reason);
      throw new Error(reason);
    }
    const ordered = [...this.#steps.entries()].sort(([a], [b]) => a - b);
    return Promise.all(ordered.map(([, s]) => s.outcome));
  }

  abort(reason: string): void {
    this.#controller.abort(new Error(reason));
    for (const execution of this.#running) execution.abort(reason);
  }

  /**
   * Never rejects: a step's outcome is awaited only by `finish`, at the plan's end, so a step that
   * failed while the model was still writing the plan would be an unhandled rejection, which ends
   * the gateway's process. Its arguments are built in here for that reason too: the model's
   * literals can nest deeper than `substitute` can recurse (a RangeError).
   *
   * A step waits for its slot here, before tool.start(): a tool's time limit runs from its start,
   * so a step waiting its turn is not timed out for it.
   */
  async #run(tool: ToolPlugin, step: PlanStepInput, args: () => Record<string, unknown>): Promise<ToolResult> {
    const release = await this.#slots.acquire(this.#signal).catch(() => undefined);
    if (release === undefined || this.#signal.aborted) {
      release?.();
      return { ok: false, content: 'error: the plan was aborted' };
    }
    let execution: ToolExecution | undefined;
    try {
      const input = args();
      execution = tool.start({ callId: `${this.ctx.callId}-step${step.index}`, signal: this.#signal, emit: () => {} });
      this.#running.add(execution);
      return await execution.end(input);
    } catch (err) {
      return { ok: false, content: `error: ${step.tool} failed: ${(err as Error).message}` };
    } finally {
      if (execution) this.#running.delete(execution);
      release();
    }
  }
}

const verbatim = (text: string) => text;

/**
 * Replaces the step references in strings (deeply) with step n's value, as `insert` writes it.
 * One pass: a `$2` inside step 1's value stays text. `${n` counts as `${n}`: the parser has
 * already made the step wait for step n, and the model's meaning is plain; left as written it
 * reached the tool as `${1`, which no tool can read.
 */
function substitute(value: unknown, before: readonly StepOutcome[], insert: (text: string) => string): unknown {
  if (typeof value === 'string') {
    return replaceStepReferences(value, (reference) => {
      const found = before.find((o) => o.index === reference.step);
      return found ? insert(stepValue(found.result)) : reference.text;
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, before, insert));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, before, insert)]));
  return value;
}

/**
 * The observation: each step's call as the model wrote it, then what its tool answered. A step
 * reads `Step 1: search("x")`, not `1. search("x")`: that is plan syntax, and a model that quotes
 * its observation in the next round would otherwise write a new plan (the plan parser cannot
 * tell a quoted step line from a step).
 */
export function formatPlanTranscript(outcomes: readonly StepOutcome[]): string {
  return outcomes.map((o) => `Step ${o.index}: ${o.raw.trim().replace(/^\d+\.\s*/, '')}\nObservation: ${o.result.content}`).join('\n');
}
