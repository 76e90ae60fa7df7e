import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROCESS_LIMITS } from '../../../sandbox/runtimes/process-launch.ts';
import type { ProcessRecipe } from '../../../sandbox/runtimes/process-pool.ts';
import { RemoteExecution } from '../../../sandbox/runtimes/remote-execution.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { eventually } from './runtime-test-helpers.ts';

// A program that never says `ready` met two timers: the call's start limit and the pool's
// startupTimeoutMs. Whichever fired first decided what its author read: the start limit said
// `sandbox_limit_exceeded`, "found no process to run it", without the program's last line (the one
// clue to why it hung), and the pool's said `sandbox_error` with it. A call that waited for a warm
// spare that never became ready then started a process of its own and waited a second full
// startupTimeoutMs for the same silence.

const HOW = '; a plugin in another language first writes {"t":"ready","pid":…,"guest":"none"} and a newline to fd 3, and flushes each message (plugins/README.md "Other languages")';

describe('a command plugin that never says ready, whichever start timer fires first', () => {
  let dir: string;
  let pools: RuntimePools | undefined;
  let recipe: ProcessRecipe;
  let output = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'never-ready-limits-'));
    // Readable by the sandbox's own uid, which runs the script.
    chmodSync(dir, 0o755);
    const script = join(dir, 'silent.sh');
    writeFileSync(script, "echo 'still loading' >&2\nexec sleep 300\n", { mode: 0o755 });
    const limits = { ...DEFAULT_PROCESS_LIMITS };
    recipe = { key: 'silent', label: 'silent_py', argv: ['/bin/sh', script], readOnlyPaths: [dir], limits, dataMb: limits.memoryMb, cpuSeconds: limits.cpuSeconds };
  });

  afterEach(async () => {
    await pools?.close();
    pools = undefined;
    output = '';
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const open = (process: { sparesPerPlugin: number; startupTimeoutMs: number; uidBase: number }): RuntimePools =>
    (pools = createRuntimePools({ process: { ...process, onOutput: ({ text }) => (output += text) } }));

  const call = (p: RuntimePools, startLimitMs: number): RemoteExecution =>
    new RemoteExecution(
      { callId: 'call_1', signal: new AbortController().signal, emit: () => undefined },
      {
        definition: { name: 'silent_py', parameters: z.object({ text: z.string() }) },
        runtime: 'process',
        timeoutMs: 10_000,
        startLimitMs,
        acquire: (signal, tenant) => p.process.acquire(recipe, signal, tenant),
      },
    );

  it('the call start limit first: the same code as startupTimeoutMs, with the last line and what the program owes', async () => {
    const p = open({ sparesPerPlugin: 0, startupTimeoutMs: 600_000, uidBase: 1_900_370_000 });
    const result = await call(p, 1500).end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(result.content).toBe(`error: silent_py failed: the plugin process did not start: no ready message within 1500 ms (still loading)${HOW}`);
    expect(await eventually(() => p.livePids().length === 0, 500)).toBe(true);
  });

  it('startupTimeoutMs first: the same words', async () => {
    const p = open({ sparesPerPlugin: 0, startupTimeoutMs: 1500, uidBase: 1_900_371_000 });
    const result = await call(p, 600_000).end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(result.content).toBe(`error: silent_py failed: the plugin process did not start: no ready message within 1500 ms (still loading)${HOW}`);
  });

  it('a call that waited for a never-ready spare fails with it rather than starting a second one', async () => {
    const p = open({ sparesPerPlugin: 1, startupTimeoutMs: 1500, uidBase: 1_900_372_000 });
    await p.process.ready();
    p.process.warm(recipe);
    const result = await call(p, 600_000).end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(result.content).toBe(`error: silent_py failed: the plugin process did not start: no ready message within 1500 ms (still loading)${HOW}`);
    // One process started, so one wait: the spare's.
    expect(output.match(/still loading/g)).toHaveLength(1);
  });

  it('the call start limit while it waits for a spare: the spare\'s last line, in the same words', async () => {
    const p = open({ sparesPerPlugin: 1, startupTimeoutMs: 600_000, uidBase: 1_900_373_000 });
    await p.process.ready();
    p.process.warm(recipe);
    const result = await call(p, 1500).end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(result.content).toBe(`error: silent_py failed: the plugin process did not start: no ready message within 1500 ms (still loading)${HOW}`);
    expect(await eventually(() => p.livePids().length === 0, 500)).toBe(true);
  });

  it('a dozen starts at once are load, not a listener leak: no MaxListenersExceededWarning', async () => {
    const p = open({ sparesPerPlugin: 0, startupTimeoutMs: 600_000, uidBase: 1_900_374_000 });
    await p.process.ready();
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const starts = Array.from({ length: 12 }, () => p.process.spawn(recipe).catch(() => undefined));
      await eventually(() => (output.match(/still loading/g)?.length ?? 0) === 12, 1500);
      await p.close();
      await Promise.all(starts);
      // Node emits the warning on the next tick after the listener that crossed the line.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(output.match(/still loading/g)).toHaveLength(12);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
