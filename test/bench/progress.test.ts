import { describe, expect, it } from 'vitest';
import { progressBar } from '../../bench/progress.ts';

/** A log file or a CI pipe: no terminal. */
function logStream() {
  const lines: string[] = [];
  return { lines, write: (text: string) => (lines.push(text), true), isTTY: false };
}

describe('a section’s progress without a terminal', () => {
  it('writes plain lines: its start, no total before the section knows it, one at most every 10 s, and its end', () => {
    const log = logStream();
    let clock = 0;
    const progress = progressBar('sweep', log, () => clock);
    progress.update(0, 20);
    clock = 4_000;
    progress.update(1, 20);
    clock = 10_500;
    progress.update(2, 20);
    clock = 12_000;
    progress.update(3, 20);
    progress.update(20, 20);
    progress.stop();
    // Before: cli-progress's "sweep |░░░| 0/1" first, a placeholder total.
    expect(log.lines).toEqual(['sweep: started\n', 'sweep: 2/20\n', 'sweep: 20/20\n']);
  });

  it('writes no escape codes into a log', () => {
    const log = logStream();
    const progress = progressBar('load', log, () => 0);
    progress.update(3, 3);
    progress.stop();
    expect(log.lines.join('')).not.toMatch(/\x1b/);
  });
});
