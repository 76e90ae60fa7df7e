import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolProgress, ToolResult } from '../../../plugins/plugin-types.ts';
import { pluginHostArgv, sandboxReadPaths } from '../../../sandbox/runtimes/node-recipe.ts';
import type { PluginProcess } from '../../../sandbox/runtimes/plugin-process.ts';
import type { CallMessage, HostMessage } from '../../../sandbox/runtimes/plugin-protocol.ts';
import { DEFAULT_PROCESS_LIMITS, GATEWAY_ROOT, nodeDataHeadroomMb } from '../../../sandbox/runtimes/process-launch.ts';
import { RemoteExecution } from '../../../sandbox/runtimes/remote-execution.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { abortLine, abortReportPlugin } from './fixtures/abort-report-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// A call's time limit expiring while the child's answer to `end` is on its way: the gateway and
// the child must agree on how the call ended. Either the result is delivered (the child finished
// onEnd before it saw `abort`; onAbort does not run), or the call times out and onAbort runs
// (the child saw `abort` first; it sends no result). The wire between the two is held here so the
// race is lost the same way every time, and the test reads the order of what crossed it.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_900_000 } });
});

afterAll(async () => {
  await pools?.close();
});

interface Wire {
  proc: PluginProcess;
  /** What crossed the wire, in order: `gateway: end`, `child: result`, … */
  log: string[];
  /** Lets the held messages through, and everything after them. */
  open(): void;
  kill(reason: string): void;
}

/** A real plugin-host child whose messages to the call (`toChild`: from the call) are held until open(). */
async function heldWire(query: string, hold: 'toGateway' | 'toChild'): Promise<Wire> {
  const module = String(fixture(`abort-report-plugin.ts${query}`));
  const limits = { ...DEFAULT_PROCESS_LIMITS, memoryMb: 128 };
  const child = await pools.process.spawn({
    key: `timeout-race${query}`,
    argv: pluginHostArgv({ guest: 'none', heapMb: limits.memoryMb, preload: module }),
    readOnlyPaths: sandboxReadPaths(GATEWAY_ROOT, module),
    limits,
    dataMb: limits.memoryMb + nodeDataHeadroomMb(2),
    cpuSeconds: null,
  });
  const log: string[] = [];
  let held: Array<() => void> | null = [];
  const pass = (way: typeof hold, deliver: () => void): void => {
    if (held && way === hold) held.push(deliver);
    else deliver();
  };
  const proc = {
    route: (callId: string, handler: (message: CallMessage) => void) =>
      child.route(callId, (message) => pass('toGateway', () => (log.push(`child: ${message.t}`), handler(message)))),
    unroute: (callId: string) => child.unroute(callId),
    onceExit: child.onceExit.bind(child),
    send: (message: HostMessage) => pass('toChild', () => (log.push(`gateway: ${message.t}`), child.send(message))),
  } as unknown as PluginProcess;
  const open = (): void => {
    const queued = held ?? [];
    held = null;
    for (const deliver of queued) deliver();
  };
  return { proc, log, open, kill: (reason) => child.kill(reason) };
}

function timedCall(wire: Wire, query: string, progress: ToolProgress[]): { execution: RemoteExecution; done: Promise<string> } {
  let release: (reason: string) => void = () => undefined;
  const done = new Promise<string>((resolve) => (release = resolve));
  const execution = new RemoteExecution(
    { callId: 'call_abort', signal: new AbortController().signal, emit: (p) => progress.push(p) },
    {
      definition: abortReportPlugin(new URLSearchParams(query)),
      runtime: 'process',
      module: String(fixture(`abort-report-plugin.ts${query}`)),
      timeoutMs: 300,
      // As the pool's lease does: the call's process is killed when the call is done with it.
      acquire: async () => ({
        proc: wire.proc,
        done: (reason) => {
          wire.kill(reason);
          release(reason);
        },
      }),
    },
  );
  return { execution, done };
}

const onAbortLines = (progress: ToolProgress[]): string[] =>
  progress.flatMap((p) => (p.type === 'unit-done' && p.detail.startsWith('onAbort') ? [p.detail] : []));

describe('a timeout racing a result', () => {
  it('a timeout racing a result can skip onAbort: the result the child sent before it saw the abort wins', async () => {
    const wire = await heldWire('', 'toGateway');
    const progress: ToolProgress[] = [];
    const { execution, done } = timedCall(wire, '', progress);
    let outcome: ToolResult | null = null;
    const ended = execution.end({ mode: 'fine' }).then((result) => (outcome = result));
    // The time limit runs out while the child's result is held on the wire.
    expect(await eventually(() => wire.log.includes('gateway: abort'), 1000)).toBe(true);
    expect(outcome).toBeNull();
    wire.open();
    await ended;
    await done;
    // The child had finished onEnd; it answered the abort of a call it no longer had.
    expect(wire.log).toEqual(['gateway: start', 'gateway: end', 'gateway: abort', 'child: result', 'child: aborted']);
    expect(outcome).toEqual({ ok: true, content: 'done: fine' });
    expect(onAbortLines(progress)).toEqual([]);
  });

  it('a timeout racing a result can skip onAbort: a child that saw the abort first runs onAbort and sends no result', async () => {
    // onEnd returns as soon as ctx.signal aborts, before the (slower) onAbort settles: the child
    // must not answer `end` for a call it has aborted, or that result would beat its `aborted`.
    const query = '?onAbort=slow';
    const wire = await heldWire(query, 'toChild');
    wire.open();
    const progress: ToolProgress[] = [];
    const { execution, done } = timedCall(wire, query, progress);
    const outcome = await execution.end({ mode: 'until-aborted' });
    await done;
    expect(outcome).toMatchObject({ ok: false, content: 'error: abort_report timed out after 300 ms', data: { code: 'sandbox_limit_exceeded' } });
    expect(onAbortLines(progress)).toEqual([abortLine('timed out after 300 ms')]);
    expect(wire.log.filter((line) => line.startsWith('child: ') && line !== 'child: progress')).toEqual(['child: aborted']);
  });

  it('a timeout after end waits for the child to answer its abort; one that never answers times out once the grace is over, and is killed', async () => {
    // Deliberate (README, onAbort): until the child answers, a result it finishes is still the
    // call's true ending. Here nothing it says reaches the gateway, as with a hook blocking its loop.
    const wire = await heldWire('', 'toGateway');
    const { execution, done } = timedCall(wire, '', []);
    let outcome: ToolResult | null = null;
    const ended = execution.end({ mode: 'hang' }).then((result) => (outcome = result));
    expect(await eventually(() => wire.log.includes('gateway: abort'), 1000)).toBe(true);
    expect(outcome).toBeNull();
    await ended;
    expect(outcome).toMatchObject({ ok: false, content: 'error: abort_report timed out after 300 ms', data: { code: 'sandbox_limit_exceeded' } });
    expect(await done).toBe('timed out after 300 ms');
    expect(wire.log).toEqual(['gateway: start', 'gateway: end', 'gateway: abort']);
  });
});
