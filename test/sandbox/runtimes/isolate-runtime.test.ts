import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import type { ToolResult } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools, type RuntimesReport } from '../../../sandbox/runtimes/runtime-pools.ts';
import guest from './fixtures/guest-plugin.ts';
import printing from './fixtures/isolate-printing-plugin.ts';
import { eventually, fixture, leftovers } from './runtime-test-helpers.ts';

// Runs on every machine: with isolated-vm (Node >= 22, optional dependency installed) against real
// isolates in the shared host; without it, against the process fallback the report announces.
let pools: RuntimePools;
let report: RuntimesReport;

beforeAll(async () => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_200_000 }, isolate: { maxCalls: 8, maxQueue: 8 } });
  report = await pools.report();
});

afterAll(async () => {
  await pools?.close();
});

const evaluate = (code: string, timeoutMs?: number): Promise<ToolResult> =>
  runScriptedCall(toolFromPlugin(guest, { moduleUrl: fixture('guest-plugin.ts'), pools }), { args: { code, ...(timeoutMs ? { timeoutMs } : {}) } }).then(
    (run) => run.result as ToolResult,
  );

describe('isolate runtime', () => {
  it('says whether isolates run here, and why not', () => {
    const major = Number(process.versions.node.split('.')[0]);
    if (major < 22) {
      expect(report.isolate).toMatchObject({ available: false, fallback: 'process' });
      expect(report.isolate.reason).toMatch(/needs Node >= 22/);
    }
    if (report.isolate.available) expect(report.isolate.isolatedVm).toMatch(/^(6\.([2-9]|\d\d+)|[7-9]|\d\d+)\./);
    else expect(report.isolate.reason).toBeTruthy();
  });

  it('evaluates guest code with copied globals and an async host callback', async () => {
    const result = await evaluate('(async () => ({ total: table.reduce((s, r) => s + r.price, 0), name: (await lookup(2)).name }))()');
    expect(result).toMatchObject({ ok: true, content: '{"total":7,"name":"item 2"}' });
    expect(result.data?.['engine']).toBe(report.isolate.available ? 'isolated-vm' : 'node-vm');
    if (!report.isolate.available) expect(result.data).toMatchObject({ runtime: 'process', requestedRuntime: 'isolate' });
  });

  it('gives the guest no Node APIs and no host objects', async () => {
    const result = await evaluate(
      '[typeof process, typeof require, typeof globalThis.fetch, typeof setTimeout, Object.getOwnPropertyNames(lookup).filter((k) => /deref|apply|copy|release/.test(k)).length].join(",")',
    );
    expect(result).toMatchObject({ ok: true, content: '"undefined,undefined,undefined,undefined,0"' });
  });

  it('stops an infinite loop and runaway memory growth with a tool error; a call in flight completes', async () => {
    const slow = evaluate('(async () => { let n = 0; for (let i = 0; i < 5; i++) n += (await lookup(i)).id; return n; })()', 3000);
    const [loop, memory] = await Promise.all([
      evaluate('for (;;) {}', 300),
      evaluate('const hoard = []; for (;;) hoard.push(new Array(100000).fill(Math.random()));', 10_000),
    ]);
    expect(loop).toMatchObject({ ok: false });
    expect(loop.content).toMatch(/GuestError: guest code ran longer than 300 ms/);
    expect(memory.ok).toBe(false);
    expect(memory.content).toMatch(/memory/);
    expect(await slow).toMatchObject({ ok: true, content: '10' });
    // The runtime keeps serving.
    expect(await evaluate('1 + 1')).toMatchObject({ ok: true, content: '2' });
  });

  // The host lives as long as the gateway: its output limit bounds a burst, not its whole life.
  it('counts the host\'s output limit afresh once it is idle, so a long life of small prints never ends it', async (ctx) => {
    // Only where isolates run (Node >= 22): the process fallback has a per-call limit of its own.
    if (!report.isolate.available) ctx.skip();
    const print = () =>
      runScriptedCall(toolFromPlugin(printing, { moduleUrl: fixture('isolate-printing-plugin.ts'), pools }), { args: { mib: 24 } }).then((run) => run.result as ToolResult);
    const pids = new Set<unknown>();
    // 3 × 24 MiB: past the host's 64 MiB, one idle call at a time.
    for (let i = 0; i < 3; i++) {
      const result = await print();
      expect(result, `call ${i + 1}`).toMatchObject({ ok: true, content: 'printed' });
      pids.add(result.data?.['pid']);
    }
    expect(pids.size).toBe(1);
  });

  it('leaves no per-call process behind', async () => {
    // Only the shared isolate host (when isolates are available) stays up between calls.
    const hosts = pools.isolate.livePids();
    expect(hosts.length).toBe(report.isolate.available ? 1 : 0);
    expect(await eventually(() => leftovers(pools).length === 0, 1000)).toBe(true);
  });
});
