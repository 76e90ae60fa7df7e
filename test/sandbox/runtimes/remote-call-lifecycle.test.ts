import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolProgress } from '../../../plugins/plugin-types.ts';
import { pluginHostArgv, sandboxReadPaths } from '../../../sandbox/runtimes/node-recipe.ts';
import type { PluginProcess } from '../../../sandbox/runtimes/plugin-process.ts';
import type { CallMessage } from '../../../sandbox/runtimes/plugin-protocol.ts';
import { DEFAULT_PROCESS_LIMITS, GATEWAY_ROOT, nodeDataHeadroomMb } from '../../../sandbox/runtimes/process-launch.ts';
import { RemoteExecution } from '../../../sandbox/runtimes/remote-execution.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { abortLine, abortReportPlugin } from './fixtures/abort-report-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// The life of one call of runtime `process` (and of the shared host the isolate runtime uses) as
// the gateway's RemoteExecution and the child's plugin-host.ts see it: what each end keeps, and
// what the plugin's hooks are told, when the call ends one way or another.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_700_000 } });
});

afterAll(async () => {
  await pools?.close();
});

const onAbortLines = (progress: ToolProgress[]): string[] =>
  progress.flatMap((p) => (p.type === 'unit-done' && p.detail.startsWith('onAbort') ? [p.detail] : []));

describe('a call whose onStart throws', () => {
  it('runs onAbort in the child even when the whole call was sent before the failure came back', async () => {
    // consumes 'call' with the arguments complete at once: `start` and `end` leave together, so
    // the child has `end` queued behind the failing onStart when the gateway's `abort` arrives.
    const query = '?start=throw';
    // The child runs the module's own definition; this one only has the gateway send no pieces
    // (so without onPiece, which a `call` plugin is never given: toolFromPlugin refuses it).
    const plugin = abortReportPlugin(new URLSearchParams(query));
    const definition = { ...plugin, runtime: 'process' as const, consumes: 'call' as const, hooks: { ...plugin.hooks, onPiece: undefined } };
    const tool = toolFromPlugin(definition, { moduleUrl: fixture(`abort-report-plugin.ts${query}`), pools });
    const run = await runScriptedCall(tool, { args: { mode: 'fine' }, callId: 'call_abort' });
    expect(run.result).toEqual({ ok: false, content: 'error: abort_report failed: boom in onStart' });
    // onAbort reports after the call's result: what the gateway drops, kept apart as afterEnd.
    await eventually(() => onAbortLines(run.afterEnd).length > 0, 1000);
    expect(onAbortLines([...run.progress, ...run.afterEnd])).toEqual([abortLine('failed: boom in onStart')]);
  });

  it("keeps the failed call for the gateway's abort, even once it has answered the call's end", async () => {
    // The same exchange on the wire, in the order that loses it: `end` answered before `abort` came.
    const query = '?start=throw';
    const module = String(fixture(`abort-report-plugin.ts${query}`));
    const limits = { ...DEFAULT_PROCESS_LIMITS, memoryMb: 128 };
    const child = await pools.process.spawn({
      key: 'failed-start-test',
      argv: pluginHostArgv({ guest: 'none', heapMb: limits.memoryMb, preload: module }),
      readOnlyPaths: sandboxReadPaths(GATEWAY_ROOT, module),
      limits,
      dataMb: limits.memoryMb + nodeDataHeadroomMb(2),
      cpuSeconds: null,
    });
    try {
      const heard: CallMessage[] = [];
      child.route('c1', (message) => heard.push(message));
      child.send({ t: 'start', callId: 'c1', toolCallId: 'call_abort', module, plugin: 'abort_report' });
      child.send({ t: 'end', callId: 'c1', args: { mode: 'fine' } });
      expect(await eventually(() => heard.some((m) => m.t === 'result'), 500)).toBe(true);
      expect(heard.find((m) => m.t === 'failed')).toMatchObject({ content: 'error: abort_report failed: boom in onStart' });
      child.send({ t: 'abort', callId: 'c1', reason: 'failed: boom in onStart' });
      expect(await eventually(() => heard.some((m) => m.t === 'aborted'), 500)).toBe(true);
      expect(heard.filter((m) => m.t === 'progress').map((m) => m.t === 'progress' && m.progress)).toEqual([
        { type: 'unit-done', detail: abortLine('failed: boom in onStart') },
      ]);
    } finally {
      child.kill('test over');
    }
  });
});

describe('a shared host (one process, many calls)', () => {
  it('keeps nothing of a finished call: its exit listener goes with it', async () => {
    // The isolate runtime's host, minus isolated-vm: plugin-host.ts --shared serves every call.
    const limits = { ...DEFAULT_PROCESS_LIMITS, memoryMb: 128 };
    const host = await pools.process.spawn({
      key: 'shared-host-test',
      label: 'shared host',
      argv: pluginHostArgv({ guest: 'node-vm', heapMb: limits.memoryMb, shared: true }),
      readOnlyPaths: sandboxReadPaths(GATEWAY_ROOT, String(fixture('echo-plugin.ts'))),
      limits,
      dataMb: limits.memoryMb + nodeDataHeadroomMb(2),
      cpuSeconds: null,
    });
    const exitListeners = (): number => (host as unknown as { exitListeners: Set<unknown> }).exitListeners.size;
    const call = (text: string) =>
      new RemoteExecution(
        { callId: `call_${text}`, signal: new AbortController().signal, emit: () => undefined },
        {
          definition: echo,
          runtime: 'isolate',
          module: String(fixture('echo-plugin.ts')),
          timeoutMs: 20_000,
          acquire: async () => ({ proc: host as PluginProcess, done: () => undefined }),
        },
      );
    try {
      const before = exitListeners();
      for (const text of ['one', 'two', 'three']) {
        expect(await call(text).end({ text })).toMatchObject({ ok: true, content: text.toUpperCase() });
      }
      // An aborted call too: it leaves the host once the child answers its `abort`.
      const aborted = call('four');
      const pending = aborted.end({ text: 'four', delayMs: 5000 });
      aborted.abort('request aborted');
      expect(await pending).toMatchObject({ ok: false, data: { code: 'aborted' } });
      expect(await eventually(() => exitListeners() === before, 1000)).toBe(true);
      expect(host.alive).toBe(true);
    } finally {
      host.kill('test over');
    }
  });
});

describe('a call that ends before its process is ready', () => {
  it('returns its error at once, not when the slow start-up finishes', async () => {
    // A child that takes 5 s to say `ready` (a Python plugin importing heavy libraries, a loaded machine).
    const slowStart = ['/usr/bin/python3', '-c', 'import json, os, socket, time\ntime.sleep(5)\nch = socket.socket(fileno=3)\nch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())\ntime.sleep(30)'];
    const tool = toolFromPlugin(echo, { command: slowStart, pools });
    const controller = new AbortController();
    const execution = tool.start({ callId: 'call_slow_start', signal: controller.signal, emit: () => undefined });
    const pending = execution.end({ text: 'x' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abortedAt = performance.now();
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, data: { code: 'aborted' } });
    // 4 s (was 2) leaves a loaded machine room, and is still short of the ready, which comes at least 4.7 s after the abort.
    expect(performance.now() - abortedAt).toBeLessThan(4000);
    // The process that comes up after all is killed then, and its slot freed.
    expect(await eventually(() => pools.process.stats.running === 0, 1000)).toBe(true);
  }, 20_000);
});

describe('a child the gateway killed for a protocol error', () => {
  it('is not heard any more: a result it had already written does not end the call', async () => {
    // On `end`: a line outside the protocol, enough blank lines that the gateway reads the rest in
    // later chunks, then a well-formed result.
    const body = [
      'import json, os, socket, time',
      'ch = socket.socket(fileno=3)',
      'ch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())',
      'reader = ch.makefile("r", encoding="utf-8")',
      'for line in reader:',
      '    msg = json.loads(line)',
      '    if msg["t"] == "end":',
      '        ch.sendall(b"not json\\n" + b"\\n" * 150000 + (json.dumps({"t": "result", "callId": msg["callId"], "ok": True, "content": "forged"}) + "\\n").encode())',
      '        time.sleep(30)',
    ].join('\n');
    const tool = toolFromPlugin(echo, { command: ['/usr/bin/python3', '-c', body], pools });
    const run = await runScriptedCall(tool, { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error' } });
    expect(run.result?.content).toMatch(/protocol error: not json/);
  }, 20_000);
});

describe.each(['bwrap', 'netns', 'none'] as const)('a child that closes fd 3 but stays alive (sandbox %s)', (mode) => {
  // It can answer nothing any more; before, only the call's time limit (here 20 s) ended the call.
  // Under `unshare` it did: `unshare --fork` and the launcher's init held fd 3 open as well.
  const closesChannel = (ready: boolean) => [
    '/usr/bin/python3',
    '-c',
    [
      'import json, os, socket, time',
      'ch = socket.socket(fileno=3)',
      ...(ready ? ['ch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())'] : []),
      'ch.close()',
      'time.sleep(60)',
    ].join('\n'),
  ];
  let own: RuntimePools;

  beforeAll(() => {
    own = createRuntimePools({ process: { sandbox: mode, sparesPerPlugin: 0, uidBase: 1_900_710_000 } });
  });

  afterAll(async () => {
    await own?.close();
  });

  it.for([
    ['after it said ready', true, /^error: echo_sample stopped: it closed its protocol channel \(fd 3\) and kept running$/],
    ['while it starts', false, /did not start: it closed its protocol channel \(fd 3\)/],
  ] as const)('is noticed when it does so %s, not at the time limit', async ([, ready, expected], { skip }) => {
    // A mode this machine cannot run falls back to no sandbox at all: that case is `none`'s.
    if ((await own.process.ready()).setup.mode !== mode) skip();
    const run = await runScriptedCall(toolFromPlugin(echo, { command: closesChannel(ready), pools: own }), { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error' } });
    expect(run.result?.content).toMatch(expected);
    expect(await eventually(() => own.process.stats.running === 0 && own.process.livePids().length === 0, 1000)).toBe(true);
  });
});
