import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { eventually, ProgressRecorder, runScript } from './python-test-helpers.ts';

const SECRET_NAME = 'CONVEYOR_TEST_SECRET_TOKEN';
const SECRET = 'sk-test-5b1e9f0c7d2a4e68';

let sandbox: PythonSandbox;
let server: Server;
let port: number;
let gatewayLike: ChildProcess;

beforeAll(async () => {
  // A secret in the gateway's environment: no cell may ever see it, neither inherited nor through
  // /proc/PID/environ (which shows a process's environment as it was at exec, hence the helper).
  process.env[SECRET_NAME] = SECRET;
  gatewayLike = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore', env: { ...process.env } });
  server = createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  sandbox = await startPythonSandbox();
});

afterAll(async () => {
  delete process.env[SECRET_NAME];
  gatewayLike?.kill('SIGKILL');
  await sandbox?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('protections report', () => {
  it('says what was measured at startup', () => {
    const report = sandbox.protections();
    expect(['bwrap', 'netns', 'none']).toContain(report.mode);
    expect(report.bwrap).toBe(report.mode === 'bwrap');
    if (report.mode !== 'none') expect(report.netns).toBe(true);
    expect(report.rlimits).toMatchObject({ cpuSeconds: 30, memoryMb: 1024, maxProcesses: 64, coreDumps: false });
    expect(report.wallClockMs).toBeGreaterThan(0);
    expect(report.outputBytes).toBeGreaterThan(0);
    if (typeof process.getuid === 'function' && process.getuid() === 0) {
      // As root, cells drop to nobody unless that cannot work here, and then the report says why.
      expect(report.uidDrop || report.warnings.some((w) => w.startsWith('cells run as root ('))).toBe(true);
    }
    expect(report.processLimitEnforced).toBe(report.hostUid !== 0);
  });
});

describe('limits', () => {
  it('kills an infinite loop at the wall-clock limit', async () => {
    const { result } = await runScript(sandbox, "print('spinning', flush=True)\nwhile True:\n    pass\n", { limits: { wallClockMs: 1000 } });
    expect(result.killedBy).toBe('wall-clock');
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe('SandboxLimitError');
    expect(result.observation).toBe('spinning\n[execution stopped: the cell ran longer than 1000 ms]');
  });

  it('kills a sleeping cell at the wall-clock limit (RLIMIT_CPU would not)', async () => {
    const { result } = await runScript(sandbox, 'import time\ntime.sleep(60)\n', { limits: { wallClockMs: 200 } });
    expect(result.killedBy).toBe('wall-clock');
  });

  it('does not count time spent waiting for the model to send the next line', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'idle', limits: { wallClockMs: 1000 }, onProgress: recorder.listener });
    cell.pushLine('x = 1\n');
    await recorder.waitFor((p) => p.type === 'unit-done');
    await new Promise((r) => setTimeout(r, 1500)); // a slow model: longer than the whole budget
    cell.pushLine('print(x)\n');
    const result = await cell.finish();
    expect(result).toMatchObject({ ok: true, observation: '1\n' });
  });

  // Regression: "A cell can stretch its wall clock with idle messages while the model writes". Its
  // code wrote {"t": "idle"} to fd 3 and the clock stopped while it kept running: Node only had the
  // cell's word. Now the zygote believes an idle only once the cell has read all it was sent.
  it('a cell cannot stop its own wall clock by writing idle messages while the model writes', async () => {
    const cell = sandbox.openCell({ id: 'forged-idle', limits: { wallClockMs: 300 } });
    cell.pushLine('import os, time\nwhile True:\n');
    cell.pushLine(`    os.write(3, b'{"t": "idle"}\\n')\n    time.sleep(0.01)\n`);
    let settled = false;
    void cell.settled.then(() => (settled = true));
    // The model keeps writing for 3 s (the loop starts with the first of these lines).
    for (let i = 0; i < 60 && !settled; i++) {
      cell.pushLine(`x = ${i}\n`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(settled).toBe(true);
    const result = await cell.finish();
    expect(result.killedBy).toBe('wall-clock');
    expect(result.durationMs).toBeLessThan(2000);
  });

  // "A limit kill hides a later SyntaxError": decided, not a defect. The kill is what happened; text
  // after the statement that was stopped never ran, and a compile check of it would need Python in
  // the zygote that every cell shares, or holding the result until the model stops writing. The
  // model's next try, without the runaway statement, gets the SyntaxError as a script run shows it.
  it('a limit kill stays the observation even when a later line does not compile', async () => {
    // 1.5 s, not less: 'a' must be printed before the kill, and a loaded CI machine (five sandbox
    // files at once) once took longer than 200 ms to start the cell and reach its first line.
    const cell = sandbox.openCell({ id: 'kill-then-syntax', limits: { wallClockMs: 1500 } });
    cell.pushLine("print('a', flush=True)\nimport time\ntime.sleep(60)\n");
    await cell.settled;
    cell.pushLine('x = = 1\n'); // the model is still writing: ignored
    const result = await cell.finish();
    expect(result).toMatchObject({ killedBy: 'wall-clock', observation: 'a\n[execution stopped: the cell ran longer than 1500 ms]' });
    // All at once (partial execution off): the same observation.
    const whole = await runScript(sandbox, "print('a', flush=True)\nimport time\ntime.sleep(60)\nx = = 1\n", { limits: { wallClockMs: 1500 } });
    expect(whole.result.observation).toBe(result.observation);
  });

  it('stops a CPU-bound cell at its CPU-time limit', async () => {
    const { result } = await runScript(sandbox, 'while True:\n    pass\n', { limits: { cpuSeconds: 1, wallClockMs: 20_000 } });
    expect(result.killedBy).toBe('cpu');
  });

  it('a memory bomb gets MemoryError (or is killed), and the sandbox lives on', async () => {
    const source = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))\n";
    const { result } = await runScript(sandbox, source, { limits: { memoryMb: 256 } });
    expect(result.ok).toBe(false);
    if (result.killedBy === undefined) {
      expect(result.error?.type).toBe('MemoryError');
      expect(result.observation).toContain('MemoryError');
    } else {
      expect(result.killedBy).toBe('memory');
    }
    expect((await runScript(sandbox, 'print(1)\n')).result.observation).toBe('1\n');
  });

  // The kernel's OOM kill counter (/proc/vmstat) did not move while the cell ran, so the SIGKILL
  // was a signal, as a script's shell shows it (137); before, "most likely out of memory".
  it('says a SIGKILL the cell sent itself is that signal, not out of memory', async () => {
    const { result } = await runScript(sandbox, "import os, signal\nprint('before')\nos.kill(os.getpid(), signal.SIGKILL)\nprint('after')\n", { limits: { memoryMb: 256 } });
    expect(result.killedBy).toBeUndefined();
    expect(result).toMatchObject({ ok: false, exitCode: 137, exitSignal: 'SIGKILL' });
    expect(result.observation).toBe('before\n[the cell process died with signal 9 (SIGKILL)]');
  });

  it('caps huge output and kills the cell', async () => {
    const { result } = await runScript(sandbox, "while True:\n    print('x' * 99)\n", { limits: { outputBytes: 10_000 } });
    expect(result.killedBy).toBe('output');
    const [printed, note] = [result.observation.slice(0, 10_000), result.observation.slice(10_000)];
    expect(printed).toBe('x'.repeat(99).concat('\n').repeat(100));
    expect(note).toBe('[execution stopped: the cell printed more than 10000 bytes]');
  });

  it('output that exactly fills the cap is fine; the first byte past it is a breach (regression)', async () => {
    const limits = { outputBytes: 10_000 };
    const exact = await runScript(sandbox, "for _ in range(100):\n    print('x' * 99)\n", { limits });
    expect(exact.result).toMatchObject({ ok: true, observation: 'x'.repeat(99).concat('\n').repeat(100) });
    const over = await runScript(sandbox, "for _ in range(100):\n    print('x' * 99)\nprint('y')\nimport time\ntime.sleep(30)\n", { limits });
    expect(over.result.killedBy).toBe('output');
  });

  it('refuses writes past the file-size limit', async () => {
    const source = "try:\n    open('big.bin', 'wb').write(b'0' * (3 * 1024 * 1024))\nexcept OSError as e:\n    print(e.errno)\n";
    const { result } = await runScript(sandbox, source, { limits: { fileSizeMb: 1 } });
    expect(result.observation).toBe('27\n'); // EFBIG
  });

  it('contains a fork bomb and leaves no process behind', async () => {
    const source =
      'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n';
    const { result } = await runScript(sandbox, source, { limits: { wallClockMs: 1500 } });
    expect(result.killedBy).toBe('wall-clock');
    expect(await eventually(() => sandbox.cellPids().length === 0)).toBe(true);
    expect((await runScript(sandbox, 'print(2)\n')).result.observation).toBe('2\n');
  });

  it('bounds the number of processes a cell may start (when cells run unprivileged)', async () => {
    const source =
      'import os, time\nstarted = 0\nfor _ in range(200):\n    try:\n        pid = os.fork()\n    except BlockingIOError:\n        break\n' +
      '    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    started += 1\nprint(started)\n';
    const { result } = await runScript(sandbox, source);
    const started = Number(result.observation.trim());
    if (sandbox.protections().processLimitEnforced) expect(started).toBeLessThan(64);
    else expect(started).toBe(200);
    // The sleeping children die with the cell.
    expect(await eventually(() => sandbox.cellPids().length === 0)).toBe(true);
  });

  it('lets a cell run 24 threads at once within the default memory limit (regression: 16 was the most)', async () => {
    // Each thread's malloc arena reserved 64 MiB of the cell's address space (MALLOC_ARENA_MAX).
    const source =
      'import threading\ngo = threading.Event()\nthreads = [threading.Thread(target=go.wait, daemon=True) for _ in range(24)]\n' +
      'for t in threads:\n    t.start()\ngo.set()\nfor t in threads:\n    t.join()\nprint(len(threads), "threads")\n';
    expect((await runScript(sandbox, source)).result.observation).toBe('24 threads\n');
  });
});

describe('isolation', () => {
  it('denies the network when a network namespace or seccomp is active', async () => {
    const source =
      'import socket\ntry:\n' +
      `    s = socket.create_connection(('127.0.0.1', ${port}), timeout=3)\n` +
      "    print('connected', s.recv(100))\nexcept OSError as e:\n    print('blocked', type(e).__name__)\n";
    const { result } = await runScript(sandbox, source);
    const report = sandbox.protections();
    if (report.netns || report.seccomp) {
      expect(result.observation).toMatch(/^blocked (ConnectionRefusedError|PermissionError|OSError)\n$/);
    } else {
      // Nothing here could deny it, and the report says so.
      expect(report).toMatchObject({ netns: false, seccomp: false });
      expect(result.observation).toBe("connected b'hello from the host\\n'\n");
    }
  });

  it('seccomp, when active, refuses AF_INET sockets outright', async () => {
    const { result } = await runScript(sandbox, "import socket\ntry:\n    socket.socket(socket.AF_INET)\n    print('created')\nexcept PermissionError:\n    print('denied')\n");
    expect(result.observation).toBe(sandbox.protections().seccomp ? 'denied\n' : 'created\n');
  });

  it('cannot read /etc/shadow', async () => {
    const source = "try:\n    open('/etc/shadow').read()\n    print('read it')\nexcept OSError as e:\n    print(type(e).__name__)\n";
    const { result } = await runScript(sandbox, source);
    const report = sandbox.protections();
    if (report.bwrap || report.hostUid !== 0) expect(result.observation).toMatch(/^(PermissionError|FileNotFoundError)\n$/);
    else expect(result.observation).toBe('read it\n');
  });

  it("never sees the gateway's environment variables", async () => {
    const source =
      `import os, glob\nsecret = ${JSON.stringify(SECRET)}\n` +
      "print('env', any(secret in v for v in os.environ.values()), 'TOKEN' in ''.join(os.environ))\n" +
      'found = False\nfor path in glob.glob("/proc/[0-9]*/environ"):\n    try:\n' +
      '        found = found or secret.encode() in open(path, "rb").read()\n    except OSError:\n        pass\n' +
      "print('proc', found)\n";
    const { result } = await runScript(sandbox, source);
    const report = sandbox.protections();
    const [envLine, procLine] = result.observation.split('\n');
    expect(envLine).toBe('env False False');
    if (report.bwrap || report.uidDrop) {
      expect(procLine).toBe('proc False');
    } else {
      // Same uid (or root) and no PID namespace: nothing guarantees it, and the report says so.
      expect(report.warnings.join('\n')).toMatch(/read its \/proc entries|cells run as root/);
    }
  });

  it('cannot write to the system', async () => {
    const source = "import os\nfor p in ['/usr/conveyor-test', '/etc/conveyor-test', '/conveyor-test']:\n    try:\n        open(p, 'w')\n        print('wrote', p)\n        os.unlink(p)\n    except OSError as e:\n        print(type(e).__name__)\n";
    const { result } = await runScript(sandbox, source);
    const report = sandbox.protections();
    if (report.bwrap || report.uidDrop) expect(result.observation).not.toContain('wrote');
  });
});

describe('abort', () => {
  it('kills the cell and every process it started, including ones that left its session', async () => {
    const controller = new AbortController();
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'abort', signal: controller.signal, onProgress: recorder.listener });
    const lines = [
      'import os, subprocess, time\n',
      "child = subprocess.Popen(['sleep', '60'])\n",
      'if os.fork() == 0:\n',
      '    os.setsid()\n',
      '    time.sleep(60)\n',
      '    os._exit(0)\n',
      "print('ready', flush=True)\n",
      'time.sleep(60)\n',
    ];
    for (const line of lines) cell.pushLine(line);
    await recorder.waitFor((p) => p.type === 'output' && p.text.includes('ready'));
    expect(sandbox.cellPids().length).toBeGreaterThanOrEqual(3);
    controller.abort();
    const result = await cell.finish();
    expect(result.killedBy).toBe('abort');
    expect(result.observation).toBe('ready\n[execution aborted]');
    expect(await eventually(() => sandbox.cellPids().length === 0)).toBe(true);
  });

  it('an already-aborted signal never starts the cell', async () => {
    const controller = new AbortController();
    controller.abort();
    const { result } = await runScript(sandbox, "print('never')\n", { signal: controller.signal });
    expect(result).toMatchObject({ ok: false, killedBy: 'abort', unitsRun: 0 });
    expect(result.observation).toBe('[execution aborted]');
  });

  it('replaces a zygote that does not confirm a kill', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'stuck', onProgress: recorder.listener });
    cell.pushLine("print('started')\n");
    await recorder.waitFor((p) => p.type === 'output');
    const zygotePid = sandbox.zygotePid() as number;
    process.kill(zygotePid, 'SIGSTOP');
    cell.kill('abort');
    const result = await cell.finish();
    expect(result.killedBy).toBe('abort');
    expect(await eventually(() => sandbox.zygotePid() !== zygotePid)).toBe(true);
    expect((await runScript(sandbox, 'print(3)\n')).result.observation).toBe('3\n');
  });
});
