import { z } from 'zod';
import { definePlugin } from '../kit/define-plugin.ts';
import type { ToolResult } from '../plugin-types.ts';
import { evaluateExact, MAX_EXPRESSION_LENGTH, warmExactMath, type Evaluation } from './exact-math.ts';

function toResult(expression: string, evaluation: Evaluation): ToolResult {
  return evaluation.ok
    ? { ok: true, content: evaluation.value, data: { expression, value: evaluation.truth ?? evaluation.value } }
    : { ok: false, content: `error: ${evaluation.error}`, data: { expression } };
}

/**
 * The `calculator` tool: exact arithmetic with mathjs BigNumbers, evaluated the moment the
 * `expression` field is decoded. In a process, not a thread: the model picks the sizes
 * (`zeros(60000000)` is nine characters), and a worker thread that runs out of heap can abort the
 * whole gateway (nodejs/node#47224: V8's out-of-memory handler is the process's); a process that
 * does is one call's error. Its processes serve one call after another (reuseProcess).
 *
 * @example
 * await runScriptedCall(inlineTool(calculator), { args: { expression: '200*701' } }) // result.content === '140200'
 */
export default definePlugin({
  name: 'calculator',
  // The comma rule is said here, before the call: max(1,000) evaluates (to max(1, 0)) with no error
  // that a thousands-separator hint could follow (syntax-hints.ts), and reading 1,000 as one number
  // would make gcd(120,360) one argument.
  description:
    'Evaluates a math expression exactly (64 significant digits; integers exact to 1000 digits) and returns its value. Syntax: + - * / ^ % ( ), ' +
    'functions like sqrt, exp, log, sin, round, factorial (n!), gcd, units ("5 cm to inch"), matrices ([1,2;3,4]); ' +
    'after a number % is percent (10% of 200 is 20, 200 + 10% is 220), between two numbers the remainder (10 % 3 is 1); ' +
    'a comma always separates arguments: write 1000, not 1,000 (max(1,000) is max(1, 0)).',
  parameters: z.object({
    expression: z.string().min(1).max(MAX_EXPRESSION_LENGTH).describe('The expression, e.g. "200*701" or "sqrt(2)/3".'),
  }),
  consumes: 'field',
  runtime: 'process',
  // Each expression gets a fresh scope, and what could change the shared mathjs instance (import,
  // createUnit, config, typed's methods) is out of an expression's reach (exact-math.ts): a
  // process start per call (~0.5 s when calls outpace the warm spare) would buy little isolation.
  reuseProcess: true,
  limits: { timeoutMs: 5_000, memoryMb: 256 },
  hooks: {
    onLoad: warmExactMath,
    onStart: warmExactMath,
    onPiece(piece, ctx) {
      if (piece.kind !== 'field' || piece.path.join('.') !== 'expression' || typeof piece.value !== 'string') return;
      ctx.state['early'] = { expression: piece.value, evaluation: evaluateExact(piece.value) };
    },
    onEnd({ expression }, ctx) {
      const early = ctx.state['early'] as { expression: string; evaluation: Evaluation } | undefined;
      return toResult(expression, early?.expression === expression ? early.evaluation : evaluateExact(expression));
    },
  },
});
