import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';

export const WORK_TOOL_NAME = 'work';

/**
 * The t/g sweep's synthetic tool: "works" (waits) exactly `ms` milliseconds, starting the moment
 * the `ms` field closes. The model writes `ms` first and a long `payload` after it, so with
 * partial execution the work overlaps the payload's decode; with it off, the pieces arrive only
 * after the decode and the wait starts there. A timer, not CPU work: the sweep measures the
 * gateway's overlap, and a busy loop would compete with the decode for this machine's 2 cores.
 *
 * @example
 * await runScriptedCall(workTool, {
 *   pieces: [{ kind: 'field', path: ['ms'], value: 50 }],
 *   args: { ms: 50, payload: 'x' },
 * }) // result.content === 'worked 50 ms'
 */
export const workPlugin = definePlugin({
  name: WORK_TOOL_NAME,
  description: 'Works for `ms` milliseconds, starting as soon as `ms` is known; `payload` is ignored.',
  parameters: z.object({
    ms: z.number().int().min(0).max(600_000),
    payload: z.string(),
  }),
  consumes: 'field',
  runtime: 'inline',
  hooks: {
    onPiece(piece, ctx) {
      if (piece.kind !== 'field' || piece.path.join('.') !== 'ms' || typeof piece.value !== 'number') return;
      ctx.state['ms'] = piece.value;
      ctx.state['work'] = startWork(piece.value, ctx.signal);
    },
    async onEnd({ ms }, ctx) {
      // The early start is valid only if the decoded call kept the value it started with.
      const early = ctx.state['ms'] === ms ? (ctx.state['work'] as Promise<void> | undefined) : undefined;
      await (early ?? startWork(ms, ctx.signal));
      return { ok: true, content: `worked ${ms} ms`, data: { ms } };
    },
  },
});

function startWork(ms: number, signal: AbortSignal): Promise<void> {
  const work = sleep(ms, undefined, { signal });
  // Awaited by onEnd; a request aborted before onEnd must not leave an unhandled rejection.
  work.catch(() => {});
  return work;
}

/** The plugin as a gateway tool (runtime inline: a timer needs no isolation). */
export const workTool: ToolPlugin = inlineTool(workPlugin);
