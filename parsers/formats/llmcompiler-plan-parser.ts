import { z } from 'zod';
import { searchMarkers } from '../marker-search.ts';
import type { ParserEvent, Piece, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { parseParserOptions } from './parser-options.ts';
import { PlanStepHead } from './plan-step-head.ts';
import { stepReferences } from './plan-step-reference.ts';
import { readPythonArguments } from './python-value-parser.ts';

export const LlmCompilerPlanParserOptionsSchema = z
  .object({
    /** The tool a plan is a call to (the plan executor). */
    toolName: z.string().min(1).default('plan'),
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
    /** The step tool that ends a plan. */
    joinTool: z.string().min(1).default('join'),
    /** LLMCompiler's stop marker; it ends the plan and is never content. */
    endMarker: z.string().min(1).default('<END_OF_PLAN>'),
  })
  .strict();

export type LlmCompilerPlanParserOptions = z.input<typeof LlmCompilerPlanParserOptionsSchema>;

export type PlanStep = Extract<Piece, { kind: 'step' }>;

// LLMCompiler's ACTION_PATTERN, line-anchored and tolerant of spacing: "3. search("x")  #E3".
const STEP_LINE = /^[ \t]*(\d+)\.[ \t]*([A-Za-z_]\w*)\((.*)\)[ \t]*(?:#\w*)?[ \t]*\r?$/;

/**
 * LLMCompiler plans (SqueezeAILab/LLMCompiler): numbered steps `1. search("x")`,
 * `2. math("$1 * 2", ["$1"])`, `Thought:` lines, and `join()` to finish, optionally followed by
 * `<END_OF_PLAN>`. A plan is one call to `toolName` whose pieces are its steps, so a plan
 * executor can dispatch each step the moment its line is complete:
 * - `call-start` with the first step, then per step line, at its "\n" (or `<END_OF_PLAN>` or
 *   `end()`), a `step` piece {index, tool, args, raw}: `args` are the positional arguments as
 *   Python literals (`$1`/`${1}` stay inside the strings, to be resolved by the executor);
 *   arguments that are not literals (`calc($1 * 2)`, keywords) give `[argsText]`, as
 *   LLMCompiler does, and so do literals nested deeper than MAX_PYTHON_NESTING; `raw` is the
 *   line as written;
 * - `call-args`: JSON built step by step, `{"steps":[step` then `,step` and `]}` at the end;
 * - `call-end` {steps} after the `join()` step, or at `<END_OF_PLAN>`.
 * Step lines are not content; every other line (`Thought: …`, prose) is, released as soon as
 * it cannot be a step. A plan cut off by `end()` before `join()` or `<END_OF_PLAN>` is
 * `malformed` (no `call-end`), and so is a truncated step line (also released as content).
 */
export function createLlmCompilerPlanParser(options: LlmCompilerPlanParserOptions = {}): ToolCallParser {
  return new LlmCompilerPlanParser(parseParserOptions(LlmCompilerPlanParserOptionsSchema, options, 'llmcompiler-plan'));
}

/**
 * The steps a step waits for, as LLMCompiler computes them: every earlier step for the join
 * step; otherwise the earlier steps it references in its arguments (`$n`, `${n}`, or `${n` with
 * its brace missing: plan-step-reference.ts).
 */
export function planStepDependencies(step: PlanStep, joinTool = 'join'): number[] {
  if (step.tool === joinTool) return Array.from({ length: Math.max(0, step.index - 1) }, (_, i) => i + 1);
  const open = step.raw.indexOf('(');
  const found = new Set<number>();
  for (const { step: n } of stepReferences(step.raw.slice(open + 1))) {
    if (n >= 1 && n < step.index) found.add(n);
  }
  return [...found].sort((a, b) => a - b);
}

interface OpenPlan {
  callId: string;
  steps: Array<Omit<PlanStep, 'kind'>>;
}

class LlmCompilerPlanParser implements ToolCallParser {
  readonly #options: z.output<typeof LlmCompilerPlanParserOptionsSchema>;
  readonly #markers: string[];
  readonly #out = new EventOutput();
  /** Input that could be the start of the end marker. */
  #held = '';
  /** The current line while it could still be a step (else it streams out as text). */
  #line = '';
  #lineIsText = false;
  #lineHasHead = false;
  #head = new PlanStepHead();
  #plan: OpenPlan | undefined;
  #calls = 0;
  #ended = false;

  constructor(options: z.output<typeof LlmCompilerPlanParserOptionsSchema>) {
    this.#options = options;
    this.#markers = ['\n', options.endMarker];
  }

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    this.#run(delta, false);
    return this.#out.take();
  }

  end(): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#run('', true);
    if (!this.#lineIsText && this.#line !== '') {
      if (this.#lineHasHead && !STEP_LINE.test(this.#line)) {
        this.#malformed(`the output ended inside step line ${JSON.stringify(this.#line)}`);
        this.#out.text(this.#line);
      } else {
        this.#lineEnded('');
      }
    } else if (this.#lineIsText) {
      this.#newLine();
    }
    if (this.#plan !== undefined) this.#malformed(`the plan ended without ${this.#options.joinTool}() or ${this.#options.endMarker}`);
    return this.#out.take(true);
  }

  #run(delta: string, final: boolean): void {
    let input = this.#held + delta;
    this.#held = '';
    for (;;) {
      const found = searchMarkers(input, this.#markers, final);
      const upTo = found.found ? found.index : final ? input.length : found.holdFrom;
      this.#lineText(input.slice(0, upTo));
      if (!found.found) {
        this.#held = input.slice(upTo);
        return;
      }
      input = input.slice(found.index + found.marker.length);
      if (found.marker === '\n') {
        this.#lineEnded('\n');
      } else {
        this.#lineEnded('');
        this.#endPlan();
      }
    }
  }

  /** More of the current line, known not to hold a line end. */
  #lineText(text: string): void {
    if (text === '') return;
    if (this.#lineIsText) {
      this.#out.text(text);
      return;
    }
    this.#line += text;
    if (this.#lineHasHead) return;
    const head = this.#head.feed(text);
    if (head === 'head') this.#lineHasHead = true;
    else if (head === 'text') {
      this.#lineIsText = true;
      this.#out.text(this.#line);
      this.#line = '';
    }
  }

  /** The line is complete; `newline` is its "\n" ('' when it ended otherwise). */
  #lineEnded(newline: string): void {
    const match = this.#lineIsText ? null : STEP_LINE.exec(this.#line);
    if (match === null) {
      this.#out.text(this.#line + newline);
      this.#newLine();
      return;
    }
    const [, index, tool, argsText] = match as unknown as [string, string, string, string];
    const raw = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
    this.#newLine();
    // Not all literals: the whole text is the one argument, as LLMCompiler has it. A literal nested
    // past MAX_PYTHON_NESTING too: as a string, the next round's JSON.stringify of the plan's
    // arguments cannot overflow the stack; the plan tool refuses that step by name (step-arguments.ts).
    const read = readPythonArguments(argsText);
    const args = 'error' in read ? { value: [argsText], json: JSON.stringify([argsText]) } : read;
    this.#step({ index: Number(index), tool, args: args.value as unknown[], raw }, args.json);
  }

  #newLine(): void {
    this.#line = '';
    this.#lineIsText = false;
    this.#lineHasHead = false;
    this.#head = new PlanStepHead();
  }

  /** `argsJson`: the args as Python's `json.dumps` writes them (an id past 2^53 keeps its digits). */
  #step(step: Omit<PlanStep, 'kind'>, argsJson: string): void {
    let plan = this.#plan;
    if (plan === undefined) {
      this.#calls += 1;
      plan = { callId: `${this.#options.callIdPrefix}${this.#calls}`, steps: [] };
      this.#plan = plan;
      this.#out.event({ type: 'call-start', callId: plan.callId, name: this.#options.toolName });
    }
    this.#out.event({ type: 'call-piece', callId: plan.callId, piece: { kind: 'step', ...step } });
    this.#out.event({ type: 'call-args', callId: plan.callId, text: `${plan.steps.length === 0 ? '{"steps":[' : ','}${stepJson(step, argsJson)}` });
    plan.steps.push(step);
    if (step.tool === this.#options.joinTool) this.#endPlan();
  }

  #endPlan(): void {
    const plan = this.#plan;
    if (plan === undefined) return;
    this.#out.event({ type: 'call-args', callId: plan.callId, text: ']}' });
    this.#out.event({ type: 'call-end', callId: plan.callId, args: { steps: plan.steps } });
    this.#plan = undefined;
  }

  #malformed(reason: string): void {
    const callId = this.#plan?.callId;
    const message = `llmcompiler-plan: ${reason}`;
    this.#out.event(callId === undefined ? { type: 'malformed', reason: message } : { type: 'malformed', callId, reason: message });
    this.#plan = undefined;
  }
}

/** JSON.stringify(step) with the args' exact JSON in place of the doubles' (keys in PlanStep's order). */
function stepJson(step: Omit<PlanStep, 'kind'>, argsJson: string): string {
  return `{"index":${JSON.stringify(step.index)},"tool":${JSON.stringify(step.tool)},"args":${argsJson},"raw":${JSON.stringify(step.raw)}}`;
}
