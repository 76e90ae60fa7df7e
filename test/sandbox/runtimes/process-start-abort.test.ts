import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PluginProcess } from '../../../sandbox/runtimes/plugin-process.ts';
import { eventually, leftovers, sandboxUids } from './runtime-test-helpers.ts';
import { bareRecipe, neverReady, STARTING, startingPools } from './starting-children.ts';

// A start-up that ends before the process is handed out: the call it was for is aborted, or the
// start-up itself failed (aborted, timed out) with the child's `ready` already on its way.
const recipe = (argv: string[]) => bareRecipe('start abort test', argv);
const pools = startingPools();
/** One process slot: a call that holds it keeps every other waiting. */
const openPools = (uidBase: number, sparesPerPlugin: number) => pools.open({ maxProcesses: 1, maxQueue: 1, sparesPerPlugin, uidBase });

describe('a call aborted while its process starts', () => {
  it('frees its process slot at once: its cold start is killed, not awaited', async () => {
    // Before, the slot stayed taken until the start-up ended (here: never; by default up to 30 s),
    // and every call queued behind it waited that long.
    const own = openPools(1_900_720_000, 0);
    const controller = new AbortController();
    const lease = own.process.acquire(recipe(neverReady), controller.signal).then(
      (l) => ({ leased: l.proc.pid }),
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(await eventually(() => pools.output().includes(STARTING), 2000)).toBe(true);
    controller.abort('request aborted');
    expect(await lease).toMatch(/did not start: request aborted/);
    expect(own.process.stats.running).toBe(0);
    expect(await eventually(() => leftovers(own, sandboxUids(own)).length === 0, 1000)).toBe(true);
  });

  it('frees its process slot at once when it waits for a spare still coming up; the spare stays for the next call', async () => {
    const own = openPools(1_900_730_000, 1);
    own.process.warm(recipe(neverReady));
    expect(await eventually(() => pools.output().includes(STARTING), 2000)).toBe(true);
    const controller = new AbortController();
    const lease = own.process.acquire(recipe(neverReady), controller.signal).then(
      (l) => ({ leased: l.proc.pid }),
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    controller.abort('request aborted');
    expect(await lease).toBe('request aborted');
    expect(own.process.stats).toEqual({ running: 0, queued: 0, spares: 1, idle: 0 });
    // No process was started for the call: the one starting is the spare, which close() takes.
    expect(pools.output().split(STARTING).length - 1).toBe(1);
  });
});

describe('a start-up that failed with its `ready` already sent', () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it('is not handed out when that `ready` is read after the failure: the start rejects', async () => {
    dir = mkdtempSync(join(tmpdir(), 'conveyor-ready-race-'));
    const sent = join(dir, 'sent');
    const script = [
      'import json, os, socket, time',
      'ch = socket.socket(fileno=3)',
      'ch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())',
      `open(${JSON.stringify(sent)}, "w").close()`,
      'time.sleep(60)',
    ].join('\n');
    const controller = new AbortController();
    const started = PluginProcess.start(
      { command: '/usr/bin/python3', args: ['-c', script], env: { PATH: '/usr/bin:/bin' }, cwd: dir },
      { startupTimeoutMs: 600_000, outputBytes: 1 << 20, signal: controller.signal },
    );
    // This loop is held until the child's `ready` is on the wire, unread; the start-up is then
    // aborted (as a closing pool or an aborted call does) before the gateway reads it.
    const until = Date.now() + 20_000;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (!existsSync(sent) && Date.now() < until) Atomics.wait(pause, 0, 0, 5);
    controller.abort('the call is over');
    const outcome = await started.then(
      (proc) => {
        proc.kill('test over');
        return { handedOut: proc.pid };
      },
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(outcome).toMatch(/^the plugin process did not start: the call is over/);
  });
});
