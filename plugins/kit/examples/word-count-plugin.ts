import { z } from 'zod';
import { definePlugin } from '../define-plugin.ts';

/**
 * Runtime `process` example: each call runs in a fresh sandboxed process (no network, scrubbed
 * environment, rlimits), so a plugin that runs a tool on model input cannot hurt the gateway.
 * ctx.state holds per-call data across hooks; progress goes to the timeline with ctx.emit.
 */
export default definePlugin({
  name: 'word_count',
  description: 'Counts the words of each line of a text as it is decoded',
  parameters: z.object({ text: z.string() }),
  consumes: 'line',
  runtime: 'process',
  limits: { timeoutMs: 10_000, memoryMb: 128, cpuSeconds: 5 },
  hooks: {
    onStart: (ctx) => {
      ctx.state['words'] = 0;
    },
    onPiece: (piece, ctx) => {
      if (piece.kind !== 'line') return undefined;
      const words = piece.text.split(/\s+/).filter(Boolean).length;
      ctx.state['words'] = Number(ctx.state['words']) + words;
      ctx.emit({ type: 'unit-done', detail: `line ${piece.lineNo}: ${words} words` });
      return undefined;
    },
    onEnd: ({ text }, ctx) => {
      // Counted from the whole text when no piece came first (a test calling onEnd alone).
      const words = ctx.state['words'] || text.split(/\s+/).filter(Boolean).length;
      return `${String(words)} words`;
    },
  },
});
