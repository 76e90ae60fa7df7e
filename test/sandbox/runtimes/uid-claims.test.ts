import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimUid, releaseUid } from '../../../sandbox/runtimes/uid-processes.ts';

// claimUid's lock files, as another gateway on this machine leaves them.
const CLAIMS = join(tmpdir(), 'conveyor-sandbox-uids');
const BASE = 1_900_800_000;
const claim = (uid: number, content: string): string => {
  mkdirSync(CLAIMS, { recursive: true, mode: 0o700 });
  const path = join(CLAIMS, String(uid));
  writeFileSync(path, content);
  return path;
};

afterEach(() => {
  for (let i = 1; i < 8; i++) releaseUid(BASE + i);
});

describe('claimUid', () => {
  it('skips a claim another gateway has just created and not yet written its pid into', () => {
    claim(BASE + 1, '');
    expect(claimUid(BASE, 8)).toBe(BASE + 2);
  });

  it('takes over a claim that has stayed empty (its owner died between open and write)', () => {
    const path = claim(BASE + 1, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    expect(claimUid(BASE, 8)).toBe(BASE + 1);
  });

  it('skips a live owner and takes over a dead one', () => {
    claim(BASE + 1, String(process.pid));
    claim(BASE + 2, '999999999');
    expect(claimUid(BASE, 8)).toBe(BASE + 2);
  });
});
