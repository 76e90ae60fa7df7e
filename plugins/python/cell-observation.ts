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

/**
 * The tool result the model and the client see for a finished cell. The model is shown only the
 * content, not `ok`: where the script's output alone would not tell it how the run ended, a note
 * says so (a shell would show the status). `sys.exit(2)` inside a function otherwise read as ""
 * and `os._exit(3)` after a print as a success; code whose last line is a bare expression, as in
 * a notebook, got "" and no hint that nothing was printed.
 */
export function toToolResult(result: CellResult): ToolResult {
  return {
    ok: result.ok,
    content: withStatusNote(result),
    data: {
      unitsRun: result.unitsRun,
      durationMs: result.durationMs,
      ...(result.killedBy ? { killedBy: result.killedBy } : {}),
      // Where the sandbox, not the code, failed: the code a process or thread runtime's result has too.
      ...(result.error?.code ? { code: result.error.code } : {}),
      ...(result.error ? { error: result.error } : {}),
    },
  };
}

function withStatusNote(result: CellResult): string {
  const text = result.observation;
  let note = '';
  if (result.error?.type === 'SystemExit' && result.exitCode) note = `[exit status ${result.exitCode}]`;
  else if (result.ok && text === '') note = '[no output]';
  if (note === '') return text;
  return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${note}`;
}

/** A cell's progress as tool progress: a statement done, or output (stdout and stderr share one pipe so their order is exact; the merged text is labelled stdout). */
export function toToolProgress(progress: CellProgress): ToolProgress {
  return progress.type === 'unit-done'
    ? { type: 'unit-done', detail: `lines ${progress.startLine}-${progress.endLine}` }
    : { type: 'output', stream: 'stdout', text: progress.text };
}
