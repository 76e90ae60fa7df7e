import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processCpuMs } from '../../../sandbox/process-tree.ts';
import { IdleProcesses, MAX_CALLS_PER_PROCESS } from '../../../sandbox/runtimes/idle-processes.ts';
import type { PluginProcess } from '../../../sandbox/runtimes/plugin-process.ts';
import { DEFAULT_PROCESS_LIMITS } from '../../../sandbox/runtimes/process-launch.ts';

/** The part of a PluginProcess the idle list uses: the policy is tested here, real processes in process-reuse.test.ts. */
function fakeProcess() {
  const listeners = new Set<() => void>();
  const proc = {
    alive: true,
    pid: null as number | null,
    killedFor: null as string | null,
    calls: 0,
    get usable() {
      return proc.alive && proc.killedFor === null;
    },
    nextCall() {
      proc.calls += 1;
    },
    onceExit(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    kill(reason: string) {
      proc.killedFor = reason;
      proc.alive = false;
      for (const listener of listeners) listener();
    },
  };
  return proc;
}

// A JS plugin's recipe: its own 10 CPU seconds plus the 2 s start-up allowance.
const recipe = { key: 'calc', cpuSeconds: 12, limits: { ...DEFAULT_PROCESS_LIMITS, cpuSeconds: 10 } };

describe('which processes a reusable plugin keeps between calls', () => {
  it('keeps one whose result says its CPU time still leaves the next call its whole limit', () => {
    const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
    const fresh = fakeProcess();
    expect(idle.offer(recipe, fresh as unknown as PluginProcess, { kind: 'result', cpuMs: 650 })).toBe(true);
    // 2 s used: 10 s are left, what the plugin declared.
    const atTheEdge = fakeProcess();
    expect(idle.offer(recipe, atTheEdge as unknown as PluginProcess, { kind: 'result', cpuMs: 2000 })).toBe(true);
    // 2.1 s used: the next call could be cut at 9.9 s of its 10.
    const spent = fakeProcess();
    expect(idle.offer(recipe, spent as unknown as PluginProcess, { kind: 'result', cpuMs: 2100 })).toBe(false);
    expect(idle.size).toBe(2);
    idle.clear();
  });

  it('believes /proc over the child: one that says it used no CPU but did is retired', async () => {
    // A real process that burns 300 ms of CPU, standing in for a plugin process that under-reports.
    const busy = spawn(process.execPath, ['-e', 'const end = Date.now() + 2000; while (Date.now() < end); setTimeout(() => {}, 10_000)']);
    try {
      // Polled: on a busy machine the loop gets less than a core.
      for (let i = 0; i < 100 && !(processCpuMs(busy.pid!) >= 300); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processCpuMs(busy.pid!)).toBeGreaterThanOrEqual(300);
      const liar = Object.assign(fakeProcess(), { pid: busy.pid! });
      // 200 ms of slack: the start-up allowance of a recipe whose process may use 0.2 s more than its calls.
      const tight = { ...recipe, cpuSeconds: 10.2 };
      const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
      expect(idle.offer(tight, liar as unknown as PluginProcess, { kind: 'result', cpuMs: 0 })).toBe(false);
      expect(idle.offer(tight, fakeProcess() as unknown as PluginProcess, { kind: 'result', cpuMs: 0 })).toBe(true);
      idle.clear();
    } finally {
      busy.kill('SIGKILL');
    }
  });

  it('keeps none that ended otherwise than by a result that says its CPU time, but one no call ran on', () => {
    const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
    for (const ending of [{ kind: 'result' }, { kind: 'answered' }, { kind: 'unanswered' }] as const) {
      expect(idle.offer(recipe, fakeProcess() as unknown as PluginProcess, ending), ending.kind).toBe(false);
    }
    expect(idle.offer(recipe, fakeProcess() as unknown as PluginProcess, { kind: 'unused' })).toBe(true);
    idle.clear();
  });

  it(`retires a process after ${MAX_CALLS_PER_PROCESS} calls`, async () => {
    const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
    const proc = fakeProcess() as unknown as PluginProcess;
    for (let call = 1; call < MAX_CALLS_PER_PROCESS; call++) {
      expect(idle.offer(recipe, proc, { kind: 'result', cpuMs: 700 })).toBe(true);
      expect(await idle.take('calc')).toBe(proc);
    }
    expect(idle.offer(recipe, proc, { kind: 'result', cpuMs: 700 })).toBe(false);
  });

  it('hands out the most recently kept live process, and forgets one that died while it waited', async () => {
    const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
    const [a, b, c] = [fakeProcess(), fakeProcess(), fakeProcess()];
    for (const proc of [a, b, c]) idle.offer(recipe, proc as unknown as PluginProcess, { kind: 'result', cpuMs: 700 });
    c.kill('outside kill');
    expect(idle.size).toBe(2);
    expect(await idle.take('calc')).toBe(b);
    expect(await idle.take('calc')).toBe(a);
    expect(await idle.take('calc')).toBeNull();
    expect(await idle.take('other')).toBeNull();
  });

  it('keeps no more than maxPerKey, the most recently used; and kills one kept longer than idleMs', async () => {
    const idle = new IdleProcesses({ maxPerKey: 1, idleMs: 50 });
    const [a, b] = [fakeProcess(), fakeProcess()];
    expect(idle.offer(recipe, a as unknown as PluginProcess, { kind: 'result', cpuMs: 700 })).toBe(true);
    expect(idle.offer(recipe, b as unknown as PluginProcess, { kind: 'result', cpuMs: 700 })).toBe(true);
    expect(a.killedFor).toBe('more than 1 kept');
    expect(idle.size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(b.killedFor).toBe('idle for 50 ms');
    expect(idle.size).toBe(0);
  });
});

describe('a kept process killed while it waits', () => {
  // A real PluginProcess stays `alive` from its kill until its exit is read: one killed while kept
  // (its output after the result past the limit) was handed to the next call, which then failed
  // for the last call's fault.
  it('is not handed out between its kill and its exit', async () => {
    const idle = new IdleProcesses({ maxPerKey: 4, idleMs: 60_000 });
    const proc = fakeProcess();
    expect(idle.offer(recipe, proc as unknown as PluginProcess, { kind: 'unused' })).toBe(true);
    proc.killedFor = 'printed more than 1 MiB';
    expect(proc.alive).toBe(true);
    expect(await idle.take('calc')).toBeNull();
    idle.clear();
  });
});
