import { planStepDependencies, type PlanStep } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult } from '../plugin-types.ts';
import { escapeTemplateText, templateParameterOf } from '../format/format-plugin.ts';
import { stepArguments } from './step-arguments.ts';

export interface PlanToolOptions {
  /** The tools steps may call (the gateway's registry, or a lookup into it). */
  tools: ToolResolver;
  /** Default `plan`, the LLMCompiler plan parser's default `toolName`. */
  name?: string;
  /** The step that ends a plan; default `join`. */
  joinTool?: string;
}

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

const REFERENCE = /\$\{(\d+)\}|\$(\d+)/g;

/**
 * One plan's execution: each step starts the moment it is added and the steps it references
 * have results, so independent steps run in parallel while the model is still writing the plan.
 * A step's positional arguments become the tool's arguments in the order of its JSON Schema
 * `properties` (`search("x")` → `{ query: "x" }`); `$n` / `${n}` inside them, or bare among them
 * (`stepArguments`), are replaced by step n's value (`stepValue`). A step whose dependency failed
 * is skipped, with that as its error.
 */
export class PlanRun {
  private readonly ctx: Pick<ToolCallContext, 'callId' | 'signal' | 'emit'>;
  readonly #steps = new Map<number, { step: PlanStepInput; outcome: Promise<StepOutcome> }>();
  readonly #running = new Set<ToolExecution>();
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal;
  readonly #resolve: (name: string) => ToolPlugin | undefined;

  readonly #joinTool: string;

  /** `planTool` is the plan tool's own name: a step may not start a nested plan. */
  constructor(options: { tools: ToolResolver; joinTool: string; planTool: string }, ctx: Pick<ToolCallContext, 'callId' | 'signal' | 'emit'>) {
    this.ctx = ctx;
    const { tools, planTool } = options;
    this.#resolve = (name) => (name === planTool ? undefined : typeof tools === 'function' ? tools(name) : tools.get(name));
    this.#joinTool = options.joinTool;
    this.#signal = AbortSignal.any([ctx.signal, this.#controller.signal]);
  }

  /** Dispatches a step (a repeated index is ignored); returns why the plan is invalid, if it is. */
  add(step: PlanStepInput): string | undefined {
    if (this.#steps.has(step.index)) return undefined;
    if (step.tool === this.#joinTool) return undefined;
    const tool = this.#resolve(step.tool);
    if (tool === undefined) return `step ${step.index}: unknown tool "${step.tool}"`;
    const deps = planStepDependencies({ ...step, kind: 'step' }, this.#joinTool);
    // Only an earlier number can be a reference: `$0`, the step's own or a later number ("under
    // $500") stays as written, as LLMCompiler's own resolver leaves an index it has no result for.
    const missing = deps.find((n) => !this.#steps.has(n));
    if (missing !== undefined) return `step ${step.index} refers to $${missing}, which is not a step of this plan`;
    const names = Object.keys((tool.parameters['properties'] as Record<string, unknown> | undefined) ?? {});
    const args = stepArguments(step);
    // A step's value goes into format's template as text, as format's own values go in: its braces
    // ("set() is {}") must not become placeholders, nor leave format short of values.
    const template = templateParameterOf(tool);
    if (args.length > names.length) return `step ${step.index}: ${step.tool} takes ${names.length} argument(s) (${names.join(', ')}), got ${args.length}`;

    const outcome = Promise.all(deps.map((n) => this.#steps.get(n)!.outcome)).then(async (before): Promise<StepOutcome> => {
      const failed = before.find((o) => !o.result.ok);
      const result = failed
        ? { ok: false, content: `error: skipped because step ${failed.index} failed` }
        : await this.#run(tool, step, () => Object.fromEntries(args.map((arg, i) => [names[i]!, substitute(arg, before, names[i] === template ? escapeTemplateText : verbatim)])));
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
      if (reason !== undefined) throw new Error(reason);
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
   */
  async #run(tool: ToolPlugin, step: PlanStepInput, args: () => Record<string, unknown>): Promise<ToolResult> {
    if (this.#signal.aborted) return { ok: false, content: 'error: the plan was aborted' };
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
    }
  }
}

/**
 * What `$n` stands for: the scalar `data.value` of step n's result when its tool gives one (a
 * search's count of matching pages, a calculator's number), else its observation text. An
 * observation is written for the model to read, so `calculator("$1 + $2")` could never parse
 * two search result lists; a tool that has one number or word to hand on says so in `value`.
 */
export function stepValue(result: ToolResult): string {
  return scalarValue(result) ?? result.content;
}

/** The result's `data.value` as text when it is a scalar (string, number, boolean, bigint). */
export function scalarValue(result: ToolResult): string | undefined {
  const value = result.data?.['value'];
  const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
  return scalar ? String(value) : undefined;
}

const verbatim = (text: string) => text;

/**
 * Replaces `$n` / `${n}` in strings (deeply) with step n's value, as `insert` writes it. One pass:
 * a `$2` inside step 1's value stays text.
 */
function substitute(value: unknown, before: readonly StepOutcome[], insert: (text: string) => string): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (match, braced: string | undefined, bare: string | undefined) => {
      const found = before.find((o) => o.index === Number(braced ?? bare));
      return found ? insert(stepValue(found.result)) : match;
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
