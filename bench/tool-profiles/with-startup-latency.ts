import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolExecution, ToolPlugin } from '../../plugins/plugin-types.ts';

/**
 * A tool that needs `startupMs` before it can take its first piece, counted from the moment the
 * gateway opens the call: a Jupyter kernel or a remote worker that has to start per call. With
 * partial execution the gateway opens the call when its name is decoded, so the start-up hides
 * behind the decode; without it the call opens after the decode and pays it in full.
 */
export function withStartupLatency(tool: ToolPlugin, startupMs: number): ToolPlugin {
  if (startupMs <= 0) return tool;
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    consumes: tool.consumes,
    start(ctx): ToolExecution {
      const inner = tool.start(ctx);
      const ready = sleep(startupMs, undefined, { signal: ctx.signal }).catch(() => undefined);
      return {
        piece: async (piece) => {
          await ready;
          return inner.piece(piece);
        },
        end: async (args) => {
          await ready;
          return inner.end(args);
        },
        abort: (reason) => inner.abort(reason),
      };
    },
  };
}
