import cliProgress from 'cli-progress';

/**
 * One progress bar per section, on stderr, so the Markdown summary on stdout stays clean. Without
 * a terminal (CI, `2>log`) the bar is written as a line every 10 s instead of redrawn in place.
 */
export function progressBar(label: string, total: number): cliProgress.SingleBar {
  const bar = new cliProgress.SingleBar(
    { format: `${label.padEnd(12)} |{bar}| {value}/{total} {detail}`, hideCursor: true, stream: process.stderr, noTTYOutput: true, notTTYSchedule: 10_000 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { detail: '' });
  return bar;
}

/**
 * Shows the cursor and turns line wrapping back on, as a bar's stop() does: a run stopped by a
 * signal exits without stopping its bars, and left the terminal it ran in with no cursor and no
 * wrapping. Only on a terminal: a log file gets no escape codes.
 */
export function restoreTerminal(stream: NodeJS.WriteStream = process.stderr): void {
  if (stream.isTTY) stream.write('\x1b[?25h\x1b[?7h');
}
