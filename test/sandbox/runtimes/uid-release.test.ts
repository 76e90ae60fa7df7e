import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { claimUid, releaseUid } from '../../../sandbox/runtimes/uid-processes.ts';
import { bareRecipe, readyAtOnce, startingPools } from './starting-children.ts';

// A start that fails between claiming its uid and handing the uid to its child. Before, the
// claim stayed held (by this live process, so never taken for stale): each such failure used up
// one more uid of the pool's range until no plugin process could start at all.
const recipe = bareRecipe('uid release test', readyAtOnce);
const pools = startingPools();
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const savedTmpdir = process.env['TMPDIR'];
// The pool's staging root goes under $TMPDIR (read at each use): this test points it here.
// Traversable by the sandbox uids, which run in directories below it.
const ownTmp = mkdtempSync(join(tmpdir(), 'conveyor-uid-release-'));
chmodSync(ownTmp, 0o755);

afterEach(() => {
  if (savedTmpdir === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmpdir;
});

afterAll(() => rmSync(ownTmp, { recursive: true, force: true }));

/** Whether the first uid above `base` is free: claims it and gives it back. */
function firstUidFree(base: number): boolean {
  try {
    releaseUid(claimUid(base, 2));
    return true;
  } catch {
    return false;
  }
}

// Only root gives each process a uid of its own (elsewhere nothing is claimed).
describe.skipIf(!isRoot)('a process start that fails after its uid is claimed', () => {
  it('gives the uid back when the staging root cannot be made', async () => {
    const base = 1_900_740_000;
    const own = pools.open({ uidBase: base, sparesPerPlugin: 0 });
    expect((await own.process.ready()).setup.uidDrop).toBe(true);
    process.env['TMPDIR'] = join(ownTmp, 'missing');
    for (let i = 0; i < 3; i++) await expect(own.process.spawn(recipe)).rejects.toThrow(/ENOENT/);
    expect(firstUidFree(base)).toBe(true);
    expect(own.process.livePids()).toEqual([]);
  });

  it('makes the staging root again when a tmp cleaner removed it, and starts the next process in it', async () => {
    const base = 1_900_750_000;
    process.env['TMPDIR'] = ownTmp;
    const own = pools.open({ uidBase: base, sparesPerPlugin: 0 });
    expect((await own.process.ready()).setup.uidDrop).toBe(true);
    const first = await own.process.spawn(recipe);
    await new Promise((resolve) => {
      first.onceExit(resolve);
      first.kill('test over');
    });
    expect(firstUidFree(base)).toBe(true);

    for (const name of readdirSync(ownTmp).filter((n) => n.startsWith('conveyor-plugins-'))) {
      rmSync(join(ownTmp, name), { recursive: true, force: true });
    }
    const second = await own.process.spawn(recipe);
    expect(readdirSync(ownTmp).filter((n) => n.startsWith('conveyor-plugins-'))).toHaveLength(1);
    await new Promise((resolve) => {
      second.onceExit(resolve);
      second.kill('test over');
    });
    expect(firstUidFree(base)).toBe(true);
    expect(own.process.livePids()).toEqual([]);
  });
});
