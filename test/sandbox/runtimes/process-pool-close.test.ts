import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PROCESS_LIMITS } from '../../../sandbox/runtimes/process-launch.ts';
import type { ProcessRecipe } from '../../../sandbox/runtimes/process-pool.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { eventually, leftovers, sandboxUids } from './runtime-test-helpers.ts';

// ProcessPool.close() while children are still coming up: a cold start for a call, a spare being
// warmed. Each child here says so on stderr (the pool's onOutput) before it would say `ready`, so
// the test closes the pool at a point where the child certainly exists and is not ready yet.
const STARTING = 'starting up';

/** A child that announces itself and then never says `ready` (a hung start-up). */
const neverReady = ['/usr/bin/python3', '-c', `import sys, time\nsys.stderr.write(${JSON.stringify(`${STARTING}\n`)})\nsys.stderr.flush()\ntime.sleep(600)`];
/** A child that comes up at once and serves nothing. */
const readyAtOnce = ['/usr/bin/python3', '-c', 'import json, os, socket, time\nch = socket.socket(fileno=3)\nch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())\ntime.sleep(600)'];

const recipe = (argv: string[]): ProcessRecipe => ({
  key: `close-test\n${argv.join('\0')}`,
  label: 'close test',
  argv,
  readOnlyPaths: [],
  limits: DEFAULT_PROCESS_LIMITS,
  dataMb: DEFAULT_PROCESS_LIMITS.memoryMb,
  cpuSeconds: null,
});

let pools: RuntimePools | null = null;
let output = '';

/** A pool whose start-up limit is beyond the test's own: only close() can end these start-ups. */
function openPools(uidBase: number): RuntimePools {
  output = '';
  pools = createRuntimePools({
    process: { sparesPerPlugin: 1, uidBase, startupTimeoutMs: 600_000, onOutput: ({ text }) => (output += text) },
  });
  return pools;
}

afterEach(async () => {
  await pools?.close();
  pools = null;
});

describe('ProcessPool.close() with children still starting', () => {
  it('close() does not wait for cold starts in flight: it kills the one a call waits for, and refuses the call', async () => {
    const own = openPools(1_900_800_000);
    const lease = own.process.acquire(recipe(neverReady), new AbortController().signal);
    const outcome = lease.then(
      (l) => ({ leased: l.proc.pid }),
      (err: unknown) => err,
    );
    expect(await eventually(() => output.includes(STARTING), 2000)).toBe(true);
    await own.close();
    // Nothing of the start-up outlives close(): not the sandbox wrapper, not the child.
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
    expect(await outcome).toMatchObject({ code: 'sandbox_error', message: expect.stringMatching(/shut down/) });
  });

  it('close() does not wait for a spare to come up before it kills it', async () => {
    const own = openPools(1_900_810_000);
    await own.process.ready();
    own.process.warm(recipe(neverReady));
    expect(await eventually(() => output.includes(STARTING), 2000)).toBe(true);
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
    expect(own.process.stats).toEqual({ running: 0, queued: 0, spares: 0 });
    expect(leftovers(own, sandboxUids(own))).toEqual([]);
  });

  it('a call queued for a slot when the pool closes is refused once the slot frees, and starts nothing', async () => {
    output = '';
    pools = createRuntimePools({ process: { maxProcesses: 1, maxQueue: 1, sparesPerPlugin: 0, uidBase: 1_900_830_000 } });
    const own = pools;
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
