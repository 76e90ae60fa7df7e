import { z } from 'zod';
import { definePlugin, type PluginContext, type PluginDefinition } from '../kit/define-plugin.ts';
import { inlineTool } from '../kit/inline-tool.ts';
import type { ToolPlugin } from '../plugin-types.ts';
import type { PythonCell, PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { splitLines, toToolProgress, toToolResult } from './cell-observation.ts';

/** `filename`: shown in tracebacks; constant by default, so results do not depend on call order. */
export type PythonPluginOptions = { filename?: string };

const DESCRIPTION = 'Run Python 3 code in a sandbox and return everything it prints (stdout and stderr, merged in order). Each call starts a fresh interpreter: nothing persists between calls. numpy and matplotlib (Agg) are usually available; there is no network access. Use print() to show results; a script that fails to compile prints only the SyntaxError.';

const cellOf = (ctx: PluginContext) => ctx.state['cell'] as PythonCell;

/**
 * The built-in `python` tool on the kit. It runs `inline` because its hooks only move lines: the
 * code itself runs in the Python sandbox's own process boundary (a forked cell per call inside
 * bubblewrap), which onStart opens while the model is still writing the first line.
 */
export function definePythonPlugin(sandbox: PythonSandbox, options: PythonPluginOptions = {}): PluginDefinition {
  return definePlugin({
    name: 'python',
    description: DESCRIPTION,
    parameters: z.object({ code: z.string().describe('The Python source to run.') }),
    consumes: 'line',
    // No gateway clock on top of the sandbox's: each cell has its wall clock and CPU limit
    // (sandbox limits), and the configured ones, not a kit default, must decide.
    limits: { timeoutMs: 0 },
    hooks: {
      onStart(ctx) {
        ctx.state['cell'] = sandbox.openCell({
          id: ctx.callId,
          signal: ctx.signal,
          filename: options.filename ?? '<llm-cell>',
          onProgress: (progress) => ctx.emit(toToolProgress(progress)),
        });
      },
      onPiece(piece, ctx) {
        // No early reject on a SyntaxError: the observation must not depend on partial execution.
        if (piece.kind !== 'line') return;
        ctx.state['sawPieces'] = true;
        cellOf(ctx).pushLine(piece.text);
      },
      async onEnd({ code }, ctx) {
        // No pieces streamed (partial execution off, or the call arrived whole): feed it all now.
        if (!ctx.state['sawPieces']) for (const line of splitLines(code)) cellOf(ctx).pushLine(line);
        return toToolResult(await cellOf(ctx).finish());
      },
      onAbort: (_reason, ctx) => cellOf(ctx)?.kill('abort'),
    },
  });
}

/**
 * The `python` tool the Dispatcher runs: each `line` piece goes straight into a sandbox cell, which
 * runs every top-level statement as soon as it is complete.
 *
 * @example
 * const sandbox = await startPythonSandbox();
 * const tools = new Map([['python', createPythonPlugin(sandbox)]]);
 */
export function createPythonPlugin(sandbox: PythonSandbox, options: PythonPluginOptions = {}): ToolPlugin {
  return inlineTool(definePythonPlugin(sandbox, options));
}
