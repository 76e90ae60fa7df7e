import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { untilStopped } from '../../sandbox/process-tree.ts';

describe('untilStopped', () => {
  it('says false while a process still runs, true once it is killed', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await once(child, 'spawn');
    try {
      expect(await untilStopped([child.pid!], 50)).toBe(false);
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      expect(await untilStopped([child.pid!], 5_000)).toBe(true);
      await exited;
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('counts a pid that is gone, or none at all, as stopped', async () => {
    const child = spawn('true', { stdio: 'ignore' });
    await once(child, 'exit');
    expect(await untilStopped([child.pid!], 50)).toBe(true);
    expect(await untilStopped([], 50)).toBe(true);
  });
});
