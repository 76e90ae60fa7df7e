import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCommandPlugin } from '../../../plugins/kit/define-command-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { RemoteExecution, type RemoteLease } from '../../../sandbox/runtimes/remote-execution.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { eventually } from './runtime-test-helpers.ts';

// A plugin in another language whose program never says `ready` (Python writing to a file object
// on fd 3 without flushing it: the protocol's first message never leaves) held each call for the
// whole start limit, 60 s, and then told its author "found no process to run it", which points at
// the pool's size rather than at the program. Its calls now say what the program owes.

/** A process that never comes: the acquire of a call whose program never says `ready`. */
const neverReady = (signal: AbortSignal): Promise<RemoteLease> =>
  new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));

function call(module?: string): RemoteExecution {
  return new RemoteExecution(
    { callId: 'call_1', signal: new AbortController().signal, emit: () => undefined },
    {
      definition: { name: 'lines_py', parameters: z.object({ text: z.string() }) },
      runtime: 'process',
      ...(module ? { module } : {}),
      timeoutMs: 10_000,
      startLimitMs: 50,
      acquire: neverReady,
    },
  );
}

describe('a call that gets no process within its start limit', () => {
  it('names the ready message a command plugin must send first, and how', async () => {
    const result = await call().end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_limit_exceeded', limit: 'timeout' } });
    expect(result.content).toMatch(/^error: lines_py found no process to run it within 50 ms: its program has not sent its ready message/);
    expect(result.content).toContain('{"t":"ready"');
    expect(result.content).toContain('flushes each message');
  });

  it('keeps to the pool for a JS plugin, whose host always says ready', async () => {
    const result = await call('file:///plugins/lines-plugin.ts').end({ text: 'x' });
    expect(result.content).toBe('error: lines_py found no process to run it within 50 ms');
  });
});

// With a real pool: a program that ends before `ready` ends its call at once, in words that say how
// (under bwrap and unshare a signal read `exited with code 137`, their 128+N); one that stays alive
// and silent past the pool's startupTimeoutMs is told what it owes, as at the call's own start limit.
describe('a command plugin that never says ready', () => {
  let pools: RuntimePools;
  let dir: string;
  const silent = (command: string[]) =>
    toolFromPlugin(defineCommandPlugin({ name: 'silent_py', description: 'Never ready', parameters: z.object({ text: z.string() }), consumes: 'field', command }), { pools });

  beforeAll(() => {
    // Spares off: each call starts the one process it reports on.
    pools = createRuntimePools({ process: { sparesPerPlugin: 0, startupTimeoutMs: 1500, uidBase: 1_900_360_000 } });
    dir = mkdtempSync(join(tmpdir(), 'never-ready-'));
    // Readable by the sandbox's own uid, which runs the scripts.
    chmodSync(dir, 0o755);
  });

  afterAll(async () => {
    await pools?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const script = (name: string, body: string): string => {
    const path = join(dir, name);
    writeFileSync(path, body, { mode: 0o755 });
    return path;
  };

  it('ends its call at once when the program dies of a signal first, naming the signal and its last line', async () => {
    const started = Date.now();
    const run = await runScriptedCall(silent(['/bin/sh', script('die.sh', "echo 'about to die' >&2\nkill -9 $$\n")]), { args: { text: 'x' } });
    expect(run.result).toMatchObject({
      ok: false,
      content: 'error: silent_py failed: the plugin process did not start: was killed by SIGKILL (about to die)',
      data: { code: 'sandbox_error', runtime: 'process' },
    });
    // Not the 60 s start limit (nor startupTimeoutMs: this one is short on purpose).
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('fails at startupTimeoutMs when the program stays alive but silent, with its last line and what it owes', async () => {
    const run = await runScriptedCall(silent(['/bin/sh', script('silent.sh', "echo 'still loading' >&2\nexec sleep 300\n")]), { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toBe(
      'error: silent_py failed: the plugin process did not start: no ready message within 1500 ms (still loading); ' +
        'a plugin in another language first writes {"t":"ready","pid":…,"guest":"none"} and a newline to fd 3, and flushes each message (plugins/README.md "Other languages")',
    );
    // Killed, not left to sleep.
    expect(await eventually(() => pools.livePids().length === 0, 500)).toBe(true);
  });
});
