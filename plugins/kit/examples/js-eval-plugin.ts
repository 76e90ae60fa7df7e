import { z } from 'zod';
import { definePlugin } from '../define-plugin.ts';

const PRICES: Record<string, number> = { apple: 0.5, bread: 2.25, milk: 1.2 };

/**
 * Runtime `isolate` example: the model writes a JavaScript expression; ctx.guest evaluates it in
 * an isolated-vm isolate (memory limit, CPU timeout, no Node APIs), granting one host callback.
 * Where isolated-vm is unavailable (Node 20) the call runs in the `process` runtime instead.
 */
export default definePlugin({
  name: 'js_eval',
  description: 'Evaluates a JavaScript expression; await price(name) looks up a price',
  parameters: z.object({ expression: z.string().max(10_000) }),
  consumes: 'call',
  runtime: 'isolate',
  limits: { timeoutMs: 5000, memoryMb: 32 },
  hooks: {
    onEnd: async ({ expression }, ctx) => {
      const value = await ctx.guest!.run(`(async () => (${expression}))()`, {
        callbacks: { price: (name) => PRICES[String(name)] ?? null },
        timeoutMs: 250,
      });
      // JSON.stringify(undefined) is undefined, not a string: onEnd must return text ('void 0', a statement).
      return JSON.stringify(value) ?? String(value);
    },
  },
});
