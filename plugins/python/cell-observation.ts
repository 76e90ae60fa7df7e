import type { ToolProgress, ToolResult } from '../plugin-types.ts';
import type { CellProgress, CellResult } from '../../sandbox/python-sandbox.ts';

/** Splits on '\n' only, keeping it (U+2028 and '\r' are not line ends for this purpose). */
export function splitLines(code: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = code.indexOf('\n'); nl >= 0; nl = code.indexOf('\n', start)) {
    lines.push(code.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < code.length) lines.push(code.slice(start));
  return lines;
}

/** The tool result the model and the client see for a finished cell. */
export function toToolResult(result: CellResult): ToolResult {
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

/** A cell's progress as tool progress: a statement done, or output (stdout and stderr share one pipe so their order is exact; the merged text is labelled stdout). */
export function toToolProgress(progress: CellProgress): ToolProgress {
  return progress.type === 'unit-done'
    ? { type: 'unit-done', detail: `lines ${progress.startLine}-${progress.endLine}` }
    : { type: 'output', stream: 'stdout', text: progress.text };
}
