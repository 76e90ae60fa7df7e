import { describe, expect, it } from 'vitest';
import { eventually, leftovers, sandboxUids } from './runtime-test-helpers.ts';
import { bareRecipe, neverReady, readyAtOnce, STARTING, startingPools } from './starting-children.ts';

// ProcessPool.close() while children are still coming up: a cold start for a call, a spare being warmed.
const recipe = (argv: string[]) => bareRecipe('close test', argv);
const pools = startingPools();
const openPools = (uidBase: number) => pools.open({ sparesPerPlugin: 1, uidBase });

describe('ProcessPool.close() with children still starting', () => {
  it('close() does not wait for cold starts in flight: it kills the one a call waits for, and refuses the call', async () => {
    const own = openPools(1_900_800_000);
    const lease = own.process.acquire(recipe(neverReady), new AbortController().signal);
    const outcome = lease.then(
      (l) => ({ leased: l.proc.pid }),
      (err: unknown) => err,
    );
    expect(await eventually(() => pools.output().includes(STARTING), 2000)).toBe(true);
    await own.close();
    // Nothing of the start-up outlives close(): not the sandbox wrapper, not the child.
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
    expect(await outcome).toMatchObject({ code: 'sandbox_error', message: expect.stringMatching(/shut down/) });
  });

  it('close() does not wait for a spare to come up before it kills it', async () => {
    const own = openPools(1_900_810_000);
    await own.process.ready();
    own.process.warm(recipe(neverReady));
    expect(await eventually(() => pools.output().includes(STARTING), 2000)).toBe(true);
    // Before, close() waited for the spare's start-up to end (here: its 600 s limit).
    await own.close();
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
    expect(own.process.stats.spares).toBe(0);
  });

  it('a call that arrives after close is refused with a SandboxError, and no process starts for it', async () => {
    const own = openPools(1_900_820_000);
    await own.process.ready();
    await own.close();
    await expect(own.process.acquire(recipe(readyAtOnce), new AbortController().signal)).rejects.toMatchObject({
      code: 'sandbox_error',
      message: expect.stringMatching(/shut down/),
    });
    own.process.warm(recipe(readyAtOnce));
    expect(own.process.stats).toEqual({ running: 0, queued: 0, spares: 0, idle: 0 });
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
  });

  it('a call queued for a slot when the pool closes is refused once the slot frees, and starts nothing', async () => {
    const own = pools.open({ maxProcesses: 1, maxQueue: 1, sparesPerPlugin: 0, uidBase: 1_900_830_000 });
    const first = await own.process.acquire(recipe(readyAtOnce), new AbortController().signal);
    const queued = own.process.acquire(recipe(readyAtOnce), new AbortController().signal).then(
      () => 'leased',
      (err: unknown) => err,
    );
    expect(own.process.stats.queued).toBe(1);
    const closing = own.close();
    // close() killed the running call's process; its call lets the slot go, as a call does.
    await new Promise<void>((resolve) => first.proc.onceExit(() => resolve()));
    first.done('its process ended');
    await closing;
    expect(await queued).toMatchObject({ code: 'sandbox_error', message: expect.stringMatching(/shut down/) });
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
  });
});
