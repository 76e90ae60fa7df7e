import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult, Verdict } from '../plugin-types.ts';
import type { CellResult, PythonCell, PythonSandbox } from '../../sandbox/python-sandbox.ts';

export interface PythonPluginOptions {
  /** Filename shown in tracebacks. Constant by default, so results do not depend on call order. */
  filename?: string;
}

const DESCRIPTION =
  'Run Python 3 code in a sandbox and return everything it prints (stdout and stderr, merged in order). ' +
  'Each call starts a fresh interpreter: nothing persists between calls. numpy and matplotlib (Agg) are ' +
  'usually available; there is no network access. Use print() to show results; a script that fails ' +
  'to compile prints only the SyntaxError.';

/**
 * The built-in `python` tool: each `line` piece goes straight into a sandbox cell, which runs
 * every top-level statement as soon as it is complete, while the model is still writing the rest.
 *
 * @example
 * const sandbox = await startPythonSandbox();
 * const tools = new Map([['python', createPythonPlugin(sandbox)]]);
 */
export function createPythonPlugin(sandbox: PythonSandbox, options: PythonPluginOptions = {}): ToolPlugin {
  const filename = options.filename ?? '<llm-cell>';
  return {
    name: 'python',
    description: DESCRIPTION,
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The Python source to run.' } },
      required: ['code'],
    },
    consumes: 'line',
    start(ctx: ToolCallContext): ToolExecution {
      return new PythonExecution(sandbox, ctx, filename);
    },
  };
}

class PythonExecution implements ToolExecution {
  private readonly cell: PythonCell;
  private sawPieces = false;

  constructor(sandbox: PythonSandbox, ctx: ToolCallContext, filename: string) {
    this.cell = sandbox.openCell({
      id: ctx.callId,
      signal: ctx.signal,
      filename,
      onProgress: (progress) => {
        if (progress.type === 'unit-done') {
          ctx.emit({ type: 'unit-done', detail: `lines ${progress.startLine}-${progress.endLine}` });
        } else {
          // stdout and stderr share one pipe so their order is exact; the merged text is labelled stdout.
          ctx.emit({ type: 'output', stream: 'stdout', text: progress.text });
        }
      },
    });
  }

  piece(piece: Piece): Verdict {
    if (piece.kind !== 'line') return undefined;
    this.sawPieces = true;
    this.cell.pushLine(piece.text);
    // No early reject on a SyntaxError: the observation must not depend on partial execution.
    return undefined;
  }

  async end(args: Record<string, unknown>): Promise<ToolResult> {
    if (!this.sawPieces) {
      // No pieces were streamed (partial execution off, or a client-side call with final
      // arguments only): feed the whole code now, line by line.
      const code = typeof args['code'] === 'string' ? args['code'] : '';
      for (const line of splitLines(code)) this.cell.pushLine(line);
    }
    return toToolResult(await this.cell.finish());
  }

  abort(_reason: string): void {
    this.cell.kill('abort');
  }
}

/** Splits on '\n' only, keeping it (U+2028 and '\r' are not line ends for this purpose). */
function splitLines(code: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = code.indexOf('\n'); nl >= 0; nl = code.indexOf('\n', start)) {
    lines.push(code.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < code.length) lines.push(code.slice(start));
  return lines;
}

function toToolResult(result: CellResult): ToolResult {
  return {
    ok: result.ok,
    content: result.observation,
    data: {
      unitsRun: result.unitsRun,
      durationMs: result.durationMs,
      ...(result.killedBy ? { killedBy: result.killedBy } : {}),
      ...(result.error ? { error: result.error } : {}),
    },
  };
}
