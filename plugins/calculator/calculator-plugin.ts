import { z } from 'zod';
import { definePlugin } from '../kit/define-plugin.ts';
import type { ToolResult } from '../plugin-types.ts';
import { evaluateExact, MAX_EXPRESSION_LENGTH, warmExactMath, type Evaluation } from './exact-math.ts';

function toResult(expression: string, evaluation: Evaluation): ToolResult {
  return evaluation.ok
    ? { ok: true, content: evaluation.value, data: { expression, value: evaluation.value } }
    : { ok: false, content: `error: ${evaluation.error}`, data: { expression } };
}

/**
 * The `calculator` tool: exact arithmetic with mathjs BigNumbers, evaluated the moment the
 * `expression` field is decoded (a thread, since a big `factorial` or matrix is CPU work).
 *
 * @example
 * await runScriptedCall(inlineTool(calculator), { args: { expression: '200*701' } }) // result.content === '140200'
 */
export default definePlugin({
  name: 'calculator',
  description:
    'Evaluates a math expression exactly (64 significant digits) and returns its value. Syntax: + - * / ^ % ( ), ' +
    'functions like sqrt, exp, log, sin, round, factorial (n!), gcd, units ("5 cm to inch"), matrices ([1,2;3,4]).',
  parameters: z.object({
    expression: z.string().min(1).max(MAX_EXPRESSION_LENGTH).describe('The expression, e.g. "200*701" or "sqrt(2)/3".'),
  }),
  consumes: 'field',
  runtime: 'thread',
  // No memoryMb: a thread's heap is the pool's worker limit (256 MB by default), not the plugin's.
  limits: { timeoutMs: 5_000 },
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
