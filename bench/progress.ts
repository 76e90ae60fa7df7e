import { constants } from 'node:os';
import cliProgress from 'cli-progress';

/** A section's progress: `update` as its steps finish (the total may change), `stop` at its end. */
export interface SectionProgress {
  update(done: number, total: number): void;
  stop(): void;
}

/** A terminal's redrawn bar, or plain lines where there is none. */
type ProgressStream = Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean };

/**
 * One progress bar per section, on stderr, so the Markdown summary on stdout stays clean. Without
 * a terminal (CI, `2>log`) it writes plain lines: one as the section starts, then at most one
 * every 10 s and one at the end, as the workloads do (cli-progress's non-TTY mode printed each
 * section's placeholder first, "0/1", before the section knew its total).
 */
export function progressBar(label: string, stream: ProgressStream = process.stderr, now: () => number = () => performance.now()): SectionProgress {
  if (stream.isTTY !== true) return progressLines(label, stream, now);
  const bar = new cliProgress.SingleBar(
    { format: `${label.padEnd(12)} |{bar}| {value}/{total} {detail}`, hideCursor: true, stream: stream as NodeJS.WriteStream },
    cliProgress.Presets.shades_classic,
  );
  // Drawn at once, so a section that takes its first step after a while shows that it began.
  bar.start(1, 0, { detail: '' });
  return {
    update(done, total) {
      bar.setTotal(total);
      bar.update(done);
    },
    stop: () => bar.stop(),
  };
}

function progressLines(label: string, stream: ProgressStream, now: () => number): SectionProgress {
  // Which part a log has reached, before its first step (a sweep's takes seconds).
  stream.write(`${label}: started\n`);
  let lastLine = now();
  return {
    update(done, total) {
      if (done !== total && now() - lastLine < 10_000) return;
      lastLine = now();
      stream.write(`${label}: ${done}/${total}\n`);
    },
    stop() {},
  };
}

/**
 * Shows the cursor and turns line wrapping back on, as a bar's stop() does: a run stopped by a
 * signal exits without stopping its bars, and left the terminal it ran in with no cursor and no
 * wrapping. Only on a terminal: a log file gets no escape codes.
 */
export function restoreTerminal(stream: NodeJS.WriteStream = process.stderr): void {
  if (stream.isTTY) stream.write('\x1b[?25h\x1b[?7h');
}

/**
 * For a standalone script with a progress bar (bench/<part>/run.ts): stopped by SIGINT, SIGTERM or
 * SIGHUP, it gives the terminal its cursor and wrapping back and exits with the signal's
 * conventional status (130, 143, 129). Node's default for those signals ends the process at once,
 * so the bar's stop() never ran and the terminal was left without a cursor. Call it before any
 * child starts: process.exit still runs child-reaper.ts's exit handler, which ends the children.
 */
export function restoreTerminalOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      restoreTerminal();
      process.exit(128 + constants.signals[signal]);
    });
  }
}
