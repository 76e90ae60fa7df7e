import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STAGING_PREFIX, stageScripts } from '../../sandbox/python-launch.ts';

describe('staging directories of a process that was killed', () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  const staging = (owner: number | undefined): string => {
    const dir = mkdtempSync(join(tmpdir(), STAGING_PREFIX));
    made.push(dir);
    writeFileSync(join(dir, 'left-by-a-cell.txt'), 'x');
    if (owner !== undefined) writeFileSync(join(dir, 'owner.pid'), `${owner}\n`);
    return dir;
  };

  it('are removed when the next sandbox stages its scripts; a live owner\'s and an unmarked one are kept', () => {
    // A pid that has certainly exited: a child that ran and was reaped.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = staging(dead);
    const live = staging(process.pid);
    const unmarked = staging(undefined);
    const fresh = stageScripts();
    made.push(fresh.root);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(unmarked)).toBe(true);
    expect(existsSync(join(fresh.root, 'owner.pid'))).toBe(true);
  });
});
