import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import type { ToolResult } from '../../../plugins/plugin-types.ts';
import { nativeTypeScript, tsxLoaderUrl } from '../../../sandbox/runtimes/node-recipe.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import type { ProcessProtections } from '../../../sandbox/runtimes/process-sandbox.ts';
import echo from './fixtures/echo-plugin.ts';
import { faultyPlugin } from './fixtures/faulty-plugin.ts';
import hostile from './fixtures/hostile-plugin.ts';
import onloadCount from './fixtures/onload-plugin.ts';
import slowLoad from './fixtures/slow-load-plugin.ts';
import { eventually, fixture, leftovers, sandboxUids } from './runtime-test-helpers.ts';

const SECRET_NAME = 'CONVEYOR_TEST_GATEWAY_SECRET';
const SECRET = 'sk-gateway-3f9a1c7e5b2d4086';

let pools: RuntimePools;
let protections: ProcessProtections;
let server: Server;
let port: number;
let secretDir: string;

beforeAll(async () => {
  process.env[SECRET_NAME] = SECRET;
  server = createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  // A file outside any plugin's directory, readable only by its owner (the gateway's uid).
  secretDir = mkdtempSync(join(tmpdir(), 'conveyor-secret-'));
  writeFileSync(join(secretDir, 'secret.txt'), SECRET);
  chmodSync(join(secretDir, 'secret.txt'), 0o600);
  // Spares off: every process seen after a call is one the call left behind.
  pools = createRuntimePools({ process: { maxProcesses: 12, maxQueue: 4, sparesPerPlugin: 0, uidBase: 1_900_100_000 } });
  protections = (await pools.process.ready()).protections;
});

afterAll(async () => {
  delete process.env[SECRET_NAME];
  await pools?.close();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(secretDir, { recursive: true, force: true });
});

const forkBombBounded = (): boolean => protections.rlimits.maxProcesses > 0;
const hostileTool = () => toolFromPlugin(hostile, { moduleUrl: fixture('hostile-plugin.ts'), pools });
const attack = (name: string, target?: string): Promise<ToolResult> =>
  runScriptedCall(hostileTool(), { args: { attack: name, ...(target ? { target } : {}) }, callId: `call_${name}` }).then((run) => run.result as ToolResult);

describe('protections report', () => {
  it('reports what the probe measured, and the strongest mode that works here', async () => {
    expect(['bwrap', 'netns', 'none']).toContain(protections.mode);
    expect(protections.envScrubbed).toBe(true);
    if (protections.mode !== 'none') expect(protections.netns).toBe(true);
    if (protections.mode !== 'none') expect(protections.pidNamespace).toBe(true);
    if (protections.launcher !== 'none') expect(protections.rlimits.fileSizeMb).toBe(16);
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!root) expect(protections.uidDrop).toBe(false);
    for (const weak of ['seccomp', 'netns', 'uidDrop', 'bwrap'] as const) {
      if (!protections[weak]) expect(protections.warnings.length).toBeGreaterThan(0);
    }
    const report = await pools.report();
    expect(report.process.protections).toEqual(protections);
    expect(report.process.typescript).toBe(nativeTypeScript() ? 'node' : 'tsx');
  });
});

describe('a sample plugin in its own process', () => {
  it('runs every hook in the child and returns its result', async () => {
    const tool = toolFromPlugin(echo, { moduleUrl: fixture('echo-plugin.ts'), pools });
    const run = await runScriptedCall(tool, {
      pieces: [{ kind: 'field', path: ['text'], value: 'hello' }],
      args: { text: 'hello' },
      callId: 'call_echo',
    });
    expect(run).toEqual({
      verdicts: [undefined],
      progress: [{ type: 'unit-done', detail: 'field text' }],
      result: { ok: true, content: 'HELLO', data: { pieces: 1, startedBy: 'call_echo' } },
      afterEnd: [],
    });
  });

  it('runs a plugin module that lies in no package: its own folder is readable in the sandbox', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-loose-plugin-'));
    // Readable by the sandbox's own uid, as a folder a user makes is (mkdtemp's is the owner's alone).
    chmodSync(dir, 0o755);
    try {
      const gateway = new URL('../../../', import.meta.url);
      writeFileSync(
        join(dir, 'loose-plugin.mjs'),
        `import { z } from '${new URL('node_modules/zod/index.js', gateway).href}';
import { definePlugin } from '${new URL('plugins/kit/define-plugin.ts', gateway).href}';
export default definePlugin({ name: 'loose', description: 'd', parameters: z.object({ text: z.string() }), consumes: 'call', runtime: 'process', hooks: { onEnd: ({ text }) => 'loose: ' + text } });
`,
      );
      const moduleUrl = pathToFileURL(join(dir, 'loose-plugin.mjs'));
      const { default: loose } = await import(moduleUrl.href);
      const run = await runScriptedCall(toolFromPlugin(loose, { moduleUrl, pools }), { args: { text: 'hi' } });
      expect(run.result).toEqual({ ok: true, content: 'loose: hi' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs the plugin\'s onLoad once in the child before the call', async () => {
    const tool = toolFromPlugin(onloadCount, { moduleUrl: fixture('onload-plugin.ts'), pools });
    const runs = [await runScriptedCall(tool, { args: {} }), await runScriptedCall(tool, { args: {} })];
    expect(runs.map((r) => r.result?.content)).toEqual(['1', '1']);
  });

  it('does not count the time the model takes between pieces against the time limit', async () => {
    const tool = toolFromPlugin({ ...echo, limits: { timeoutMs: 4000 } }, { moduleUrl: fixture('echo-plugin.ts'), pools });
    const pieces = ['a', 'b', 'c'].map((value) => ({ kind: 'field' as const, path: ['text'], value }));
    // 6 s of decode against a 4 s limit: the child waits on the model, not the other way round.
    const run = await runScriptedCall(tool, { pieces, args: { text: 'slow model' }, gapMs: 1500 });
    expect(run.result).toMatchObject({ ok: true, content: 'SLOW MODEL' });
  }, 20_000);

  it("does not count the wait for its process (a cold start, the plugin's onLoad) against the call's limit", async () => {
    // No spares: the call starts its own process, which imports the plugin and runs its 1.5 s
    // onLoad before it is ready, against a 1 s limit that the call itself keeps well within.
    const tool = toolFromPlugin({ ...slowLoad, runtime: 'process' }, { moduleUrl: fixture('slow-load-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { text: 'cold' } });
    expect(run.result).toMatchObject({ ok: true, content: 'COLD' });
  });

  it('starts without tsx where Node strips types itself, and still loads a module that needs a transform', async () => {
    // Only the gateway side needs the definition; the child imports the module by URL.
    // Without echo's onPiece, which a `call` plugin is never given (toolFromPlugin refuses it).
    const definition = { ...echo, name: 'transform_sample', consumes: 'call' as const, hooks: { onEnd: echo.hooks.onEnd } };
    const tool = toolFromPlugin(definition, { moduleUrl: fixture('transform-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { text: 'enum' } });
    expect(run.result).toMatchObject({ ok: true, content: 'ENUM!' });
    const execArgv = (run.result?.data as { execArgv: string[] }).execArgv;
    expect(execArgv.includes('--experimental-strip-types')).toBe(nativeTypeScript());
    expect(execArgv.includes(tsxLoaderUrl())).toBe(!nativeTypeScript());
  });

  it('runs a plugin written in another language (Python) over the same protocol', async () => {
    const python = '/usr/bin/python3';
    const script = new URL('../../../plugins/kit/examples/echo_plugin.py', import.meta.url).pathname;
    const tool = toolFromPlugin(echo, { command: [python, script], pools });
    const run = await runScriptedCall(tool, {
      pieces: [{ kind: 'field', path: ['text'], value: 'hi' }, { kind: 'field', path: ['other'], value: 'bad' }],
      args: { text: 'hi' },
    });
    expect(run.verdicts).toEqual([undefined, { verdict: 'reject', reason: 'the value "bad" is not allowed' }]);
    expect(run.progress).toEqual([{ type: 'unit-done', detail: 'field text' }]);
    const ok = await runScriptedCall(tool, { args: { text: 'py' }, callId: 'call_py' });
    expect(ok.result).toEqual({ ok: true, content: 'PY', data: { pieces: 0, startedBy: 'call_py' } });
  });

  // Regression (review s38, finding 2): both read "stopped: it exited with code 1 (Node.js v20.20.2)".
  it('names the error of a throw in a callback, or of a stray rejection, that ended the process', async () => {
    const faulty = toolFromPlugin(faultyPlugin(new URLSearchParams()), { moduleUrl: fixture('faulty-plugin.ts'), pools });
    const crash = async (mode: string) => (await runScriptedCall(faulty, { args: { mode } })).result;
    expect(await crash('callback-throw')).toMatchObject({
      ok: false,
      content: 'error: faulty stopped: it exited with code 1 (TypeError: cannot read x of undefined (in a callback))',
    });
    expect(await crash('stray-rejection')).toMatchObject({ ok: false, content: 'error: faulty stopped: it exited with code 1 (Error: stray rejection during onEnd)' });
  });

  it('kills the process tree when the request is aborted mid-call', async () => {
    const tool = hostileTool();
    const controller = new AbortController();
    let bombing: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (bombing = resolve));
    const execution = tool.start({ callId: 'call_abort', signal: controller.signal, emit: () => bombing() });
    const pending = execution.end({ attack: forkBombBounded() ? 'fork-bomb' : 'spawn-tree' });
    await started;
    await new Promise((resolve) => setTimeout(resolve, 200)); // let it multiply
    controller.abort();
    const result = await pending;
    expect(result.ok).toBe(false);
    expect(result.content).toMatch(/aborted/);
    expect(await eventually(() => leftovers(pools, sandboxUids(pools)).length === 0)).toBe(true);
  });
});

describe('a child that misbehaves on the protocol', () => {
  const pythonChild = (body: string): string[] => [
    '/usr/bin/python3',
    '-c',
    `import json, os, socket, sys\nch = socket.socket(fileno=3)\nch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())\n${body}`,
  ];

  it('is killed when it sends a message outside the protocol', async () => {
    const tool = toolFromPlugin(echo, { command: pythonChild('ch.sendall(b"{\\"t\\": \\"result\\", \\"callId\\": 7}\\n")\nimport time; time.sleep(30)'), pools });
    const run = await runScriptedCall(tool, { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error' } });
    expect(run.result?.content).toMatch(/protocol error/);
  });

  // Regression: it read `error: echo_sample the plugin process did not start: …`, not the documented `error: <tool> failed: …`.
  it("that dies before it is ready is the call's error in one line, the error's own, not its whole stack, worded `failed: …`", async () => {
    const crash = ['/usr/bin/python3', '-c', 'import json\ndef load():\n    raise ModuleNotFoundError("No module named shop_data")\nload()'];
    const run = await runScriptedCall(toolFromPlugin(echo, { command: crash, pools }), { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error' } });
    expect(run.result?.content).toBe('error: echo_sample failed: the plugin process did not start: exited with code 1 (ModuleNotFoundError: No module named shop_data)');
    expect(run.result?.content).not.toContain('Traceback');
  });

  it('says, for a result past the protocol\'s line limit, how large a message may be and what to do', async () => {
    const run = await runScriptedCall(hostileTool(), { args: { attack: 'huge-result' } });
    expect(run.result).toMatchObject({ ok: false });
    expect(run.result?.content).toContain('a message over 8 MiB (a result or progress this large is more than the gateway takes from a plugin process: return less)');
  });

  it('is killed when it floods its output', async () => {
    const tool = toolFromPlugin(echo, { command: pythonChild('while True:\n    sys.stdout.write("x" * 65536)'), pools });
    const run = await runScriptedCall(tool, { args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_limit_exceeded', limit: 'output' } });
    expect(run.result?.content).toMatch(/printed more than 1048576 bytes/);
  });
});

describe('hostile-code battery', () => {
  it('stops or denies every attack with a tool error, while a call in flight completes', async () => {
    const echoTool = toolFromPlugin(echo, { moduleUrl: fixture('echo-plugin.ts'), pools });
    // Started first, finished last: it must not notice the attacks around it.
    const bystander = runScriptedCall(echoTool, { args: { text: 'still here', delayMs: 3000 }, callId: 'call_bystander' });
    const gatewayEnviron = `${process.pid}/environ`;
    const attacks = {
      // Without RLIMIT_NPROC (non-root without namespaces) a fork bomb would load the whole machine
      // until the wall-clock kill: the report must say so, and the test does not set one off.
      ...(forkBombBounded() ? { 'fork-bomb': attack('fork-bomb') } : {}),
      'memory-bomb': attack('memory-bomb'),
      'buffer-bomb': attack('buffer-bomb'),
      'infinite-loop': attack('infinite-loop'),
      'busy-cpu': attack('busy-cpu'),
      sleep: attack('sleep'),
      'huge-file': attack('huge-file'),
      'read-secret-file': attack('read-file', join(secretDir, 'secret.txt')),
      'read-gateway-environ': attack('read-file', `/proc/${gatewayEnviron}`),
      network: attack('network', String(port)),
      env: attack('env'),
      crash: attack('crash'),
    };
    const results = Object.fromEntries(await Promise.all(Object.entries(attacks).map(async ([k, p]) => [k, await p] as const)));
    // What this machine's sandbox can deny; where it cannot, the report must carry a warning.
    const holds: Record<string, boolean> = {
      'read-secret-file': protections.bwrap || protections.uidDrop,
      'read-gateway-environ': protections.pidNamespace || protections.uidDrop,
      network: protections.seccomp || protections.netns,
    };
    for (const [name, result] of Object.entries(results)) {
      if (holds[name] === false) {
        expect(protections.warnings.length, `${name} is not denied here, and the report must say so`).toBeGreaterThan(0);
        continue;
      }
      expect(result.ok, `${name}: ${result.content}`).toBe(false);
      expect(result.content, name).not.toContain(SECRET);
      expect(result.content, name).not.toContain('hello from the host');
    }
    if (forkBombBounded()) expect(results['fork-bomb']?.content).toMatch(/timed out after 15000 ms/);
    else expect(protections.warnings.join('\n')).toMatch(/RLIMIT_NPROC is not set/);
    // Whichever comes first: the CPU limit (1 s) or the wall clock.
    expect(results['infinite-loop']?.content).toMatch(/CPU limit|timed out after 15000 ms/);
    expect(results['sleep']?.content).toMatch(/timed out after 15000 ms/);
    expect(results['memory-bomb']?.content).toMatch(/memory/);
    expect(results['buffer-bomb']?.content).toMatch(/Array buffer allocation failed|memory/);
    // 13 processes share this machine's cores: the wall clock may come first (the next test pins RLIMIT_CPU).
    expect(results['busy-cpu']?.content).toMatch(/CPU limit|timed out after 15000 ms/);
    expect(results['huge-file']?.content).toMatch(/file size limit|EFBIG|File too large/);
    expect(results['crash']?.content).toMatch(/exited with code 3/);
    expect(results['env']?.content).toMatch(/"HOME"/);
    if (protections.seccomp) expect(results['network']?.content).toMatch(/EPERM/);
    else if (protections.netns) expect(results['network']?.content).toMatch(/ENETUNREACH|ECONNREFUSED/);
    if (protections.bwrap) expect(results['read-secret-file']?.content).toMatch(/ENOENT/);
    else if (protections.uidDrop) expect(results['read-secret-file']?.content).toMatch(/EACCES/);
    if (protections.pidNamespace) expect(results['read-gateway-environ']?.content).toMatch(/ENOENT/);
    else if (protections.uidDrop) expect(results['read-gateway-environ']?.content).toMatch(/EACCES/);

    expect((await bystander).result).toMatchObject({ ok: true, content: 'STILL HERE' });
    expect(await eventually(() => leftovers(pools, sandboxUids(pools)).length === 0, 500)).toBe(true);

    // And the runtime keeps serving.
    const after = await runScriptedCall(echoTool, { args: { text: 'after' } });
    expect(after.result).toMatchObject({ ok: true, content: 'AFTER' });
    // Two of the attacks run into the 15 s wall clock, with 13 processes on the machine's cores.
  }, 60_000);

  it('stops a busy process at its CPU-time limit', async () => {
    // Its 1 s of CPU, not the 15 s wall clock, must stop it: on two cores shared with a loaded CI
    // run the process got about a tenth of a core and the wall clock fired first (CI, Node 22).
    // Without a launcher there is no CPU limit, and the wall clock is the one that stops it.
    const timeoutMs = protections.launcher === 'none' ? hostile.limits!.timeoutMs : 50_000;
    const patient = toolFromPlugin({ ...hostile, limits: { ...hostile.limits, timeoutMs } }, { moduleUrl: fixture('hostile-plugin.ts'), pools });
    const { result } = await runScriptedCall(patient, { args: { attack: 'busy-cpu' }, callId: 'call_busy_cpu' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_limit_exceeded', limit: protections.launcher === 'none' ? 'timeout' : 'cpu' } });
  }, 70_000);

  it('refuses a call at once when every process is busy and the queue is full', async () => {
    const small = createRuntimePools({ process: { maxProcesses: 1, maxQueue: 1, sparesPerPlugin: 0, uidBase: 1_900_110_000 } });
    try {
      const tool = toolFromPlugin(hostile, { moduleUrl: fixture('hostile-plugin.ts'), pools: small });
      const controller = new AbortController();
      const running = runScriptedCall(tool, { args: { attack: 'sleep' }, callId: 'a' }, controller.signal);
      const queued = runScriptedCall(tool, { args: { attack: 'crash' }, callId: 'b' });
      const refused = await runScriptedCall(tool, { args: { attack: 'crash' }, callId: 'c' });
      expect(refused.result).toMatchObject({ ok: false, data: { code: 'sandbox_queue_full' } });
      expect(refused.result?.content).toBe('error: hostile failed: the process runtime is busy: 1 running and 1 queued');
      controller.abort();
      expect((await running).result?.content).toMatch(/aborted/);
      expect((await queued).result?.content).toMatch(/exited with code 3/);
    } finally {
      await small.close();
    }
  });
});
