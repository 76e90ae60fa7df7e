import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { eventually, ProgressRecorder, runScript } from './python-test-helpers.ts';

// Cells of one zygote share a uid (65534 under bwrap): what keeps them out of each other's (and
// the zygote's) processes is that every one of them is non-dumpable, plus seccomp.
// Small limits: /tmp under bwrap is sized max(memoryMb, 2 × fileSizeMb) = 64 MiB here.
let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ limits: { memoryMb: 64, fileSizeMb: 8 } });
});

afterAll(async () => {
  await sandbox?.close();
});

/** Whether the kernel's same-uid checks bind the cell: not when it runs as root (CAP_SYS_PTRACE). */
async function cellIsRoot(): Promise<boolean> {
  const { result } = await runScript(sandbox, 'import os\nprint(os.geteuid())\n');
  return result.observation === '0\n';
}

describe('cells and the zygote are not dumpable', () => {
  it('a cell still reads its own /proc/self, and is not dumpable', async () => {
    const source =
      "import os, ctypes\nlibc = ctypes.CDLL(None)\n" +
      "print('VmSize' in open('/proc/self/status').read(), len(os.listdir('/proc/self/fd')) > 2, libc.prctl(3, 0, 0, 0, 0))\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe('True True 0\n'); // PR_GET_DUMPABLE = 3
  });

  it("a cell cannot open another cell's or the zygote's /proc/PID/mem or list their fds", async () => {
    const recorder = new ProgressRecorder();
    const victim = sandbox.openCell({ id: 'victim', onProgress: recorder.listener });
    victim.pushLine("import os, ctypes\nsecret = ctypes.create_string_buffer(b'TOPSECRET-VICTIM')\n");
    victim.pushLine("print('victim', os.getpid(), ctypes.addressof(secret), flush=True)\n");
    // Output may come in several chunks: wait for the print's statement to have run, then join them.
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 3);
    const said = recorder.events.map((e) => ('text' in e ? e.text : '')).join('');
    const [, pid, address] = /victim (\d+) (\d+)/.exec(said) as RegExpExecArray;
    const source =
      `import os\ndef attempt(path, address=None):\n    try:\n        if address is None:\n            os.listdir(path)\n` +
      `        else:\n            with open(path, 'rb') as f:\n                f.seek(address)\n                f.read(16)\n` +
      `        return 'OPEN'\n    except OSError as e:\n        return type(e).__name__\n` +
      // With per-cell namespaces the victim's pid (2) is the attacker's own: it cannot name the victim at all.
      `targets = [(p, a) for p, a in ((${pid}, ${address}), (os.getppid(), 4096)) if p != os.getpid()]\n` +
      `print(*[r for p, a in targets for r in (attempt('/proc/%d/mem' % p, a), attempt('/proc/%d/fd' % p))])\n`;
    const { result } = await runScript(sandbox, source);
    victim.kill('abort');
    await victim.finish();
    if (sandbox.protections().cellNamespaces) {
      expect(result.observation).toBe('PermissionError PermissionError\n'); // its own init's
    } else if (sandbox.protections().mode === 'bwrap' || !(await cellIsRoot())) {
      expect(result.observation).toBe('PermissionError PermissionError PermissionError PermissionError\n');
    }
  });

  it("pidfd_getfd cannot take the zygote's socket to Node", async () => {
    const source =
      'import os, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\ntry:\n    pidfd = os.pidfd_open(os.getppid())\n' +
      "    fd = libc.syscall(438, pidfd, 3, 0)\n    print('took fd' if fd >= 0 else 'refused %d' % ctypes.get_errno())\n" +
      "except PermissionError:\n    print('refused 1')\n";
    const { result } = await runScript(sandbox, source);
    if (sandbox.protections().mode === 'bwrap' || !(await cellIsRoot())) expect(result.observation).toBe('refused 1\n'); // EPERM
  });

  it('seccomp, when active, refuses pidfd_open, pidfd_getfd, kcmp and process_madvise outright', async () => {
    // Invalid arguments: without the filter each would fail with EBADF/EINVAL/ESRCH, not EPERM.
    const source =
      'import ctypes, platform\nlibc = ctypes.CDLL(None, use_errno=True)\n' +
      "calls = {'pidfd_open': (434, 0, 1), 'pidfd_getfd': (438, -1, 3, 0), 'process_madvise': (440, -1, 0, 0, 0, 0)}\n" +
      "if platform.machine() == 'x86_64':\n    calls['kcmp'] = (312, 1, 1, 99, 0, 0)\n" +
      'for name, args in calls.items():\n    ctypes.set_errno(0)\n    rc = libc.syscall(*args)\n' +
      "    print(name, rc, ctypes.get_errno() if rc == -1 else '-')\n";
    const { result } = await runScript(sandbox, source);
    const lines = result.observation.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      if (sandbox.protections().seccomp) expect(line).toMatch(/^\w+ -1 1$/);
      else expect(line).not.toMatch(/^\w+ -1 1$/);
    }
  });
  it("seccomp, when active, refuses memfd_create: a written memfd is RAM outside the cell's memory limit", async () => {
    const { result } = await runScript(sandbox, "import os\ntry:\n    os.memfd_create('x')\n    print('made')\nexcept OSError as e:\n    print(e.errno)\n");
    expect(result.observation).toBe(sandbox.protections().seccomp ? '1\n' : 'made\n');
  });
});

describe('the zygote under bwrap is the sandbox\'s PID 1', () => {
  // With per-cell namespaces a cell cannot name the zygote at all: its PID 1 is its own init, which
  // drops the signals the same way (no handlers), so the cell cannot stop its own reaper either.
  it('drops the signals a cell sends it, so no cell can stop it and every other cell with it', async ({ skip }) => {
    if (sandbox.protections().mode !== 'bwrap') skip(); // elsewhere the zygote is root's or the cells' parent process only
    const before = sandbox.zygotePid();
    const source =
      'import os, signal, time\nprint(os.getppid())\n' +
      'for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGKILL):\n    os.kill(1, sig)\n' +
      'time.sleep(0.2)\nprint(os.getppid())\n';
    const { result } = await runScript(sandbox, source);
    // Sent without error (same uid), and the cell's parent is still the zygote, PID 1.
    expect(result.observation).toBe('1\n1\n');
    expect(sandbox.zygotePid()).toBe(before);
    expect((await runScript(sandbox, 'print(6 * 7)\n')).result.observation).toBe('42\n');
  });

  it("is not dumpable: a cell cannot open its /proc/1/mem (bwrap's own reaper was, and had no seccomp filter)", async ({ skip }) => {
    if (sandbox.protections().mode !== 'bwrap') skip();
    const source = "try:\n    open('/proc/1/mem', 'rb+')\n    print('OPEN')\nexcept OSError as e:\n    print(type(e).__name__)\n";
    expect((await runScript(sandbox, source)).result.observation).toBe('PermissionError\n');
  });

  it('leaves a cell its own Ctrl-C: SIGINT to itself is a KeyboardInterrupt, as in any Python', async () => {
    const { result } = await runScript(sandbox, "import os, signal\nprint('before')\nos.kill(os.getpid(), signal.SIGINT)\nprint('after')\n");
    expect(result.observation).toMatch(/^before\n[\s\S]*KeyboardInterrupt/);
    expect(result.observation).not.toContain('after');
  });
});

describe('per-cell namespaces (under bwrap)', () => {
  it('are in use wherever bwrap runs, unless the kernel refuses a nested user namespace (and the report then says so)', () => {
    const report = sandbox.protections();
    const refused = report.warnings.some((w) => /per-cell namespaces failed: .*clone\(/.test(w));
    if (report.mode === 'bwrap') expect(report.cellNamespaces || refused).toBe(true);
    else expect(report.cellNamespaces).toBe(false);
    if (!report.cellNamespaces) expect(report.warnings.join('\n')).toMatch(/cells share one PID namespace/);
  });

  // Regression: cells of one zygote shared uid 65534, one PID namespace and one /tmp, so a cell (one
  // client's request) could kill a concurrent cell, list it in /proc and read its working directory.
  it("keep a concurrent cell out of reach: cell B cannot kill cell A, see it in /proc, or read A's files", async ({ skip }) => {
    if (!sandbox.protections().cellNamespaces) skip();
    const recorder = new ProgressRecorder();
    const a = sandbox.openCell({ id: 'cell-a', onProgress: recorder.listener });
    a.pushLine("import os\nopen('secret-a.txt', 'w').write('TOPSECRET-A')\nopen('/dev/shm/secret-a', 'w').write('TOPSECRET-A')\n");
    a.pushLine("print('A', os.getpid(), os.getcwd(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), flush=True)\n");
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 4);
    const said = recorder.events.map((e) => ('text' in e ? e.text : '')).join('');
    // A is PID 2 of its own namespace, under its init (PID 1), and works in its own /tmp.
    expect(said).toBe('A 2 /tmp [1, 2]\n');
    const liveBefore = sandbox.cellPids().length;
    expect(liveBefore).toBeGreaterThanOrEqual(2); // A's init and A, as the host sees them
    const b =
      'import glob, os, signal\nme = os.getpid()\n' +
      "print('B', me, sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n" +
      // Every pid B can address at all (signal 0), then SIGKILL to each but itself and its init.
      'reachable = []\nfor pid in range(1, 1 << 15):\n    try:\n        os.kill(pid, 0)\n        reachable.append(pid)\n' +
      '    except OSError:\n        pass\n' +
      "print('reachable', reachable)\n" +
      'for pid in reachable:\n    if pid not in (1, me):\n        os.kill(pid, signal.SIGKILL)\n' +
      // A's file, wherever it might be: by A's path, anywhere under /tmp and /dev/shm, through /proc.
      "found = []\nfor path in ['/tmp/secret-a.txt', '/dev/shm/secret-a'] + glob.glob('/tmp/**', recursive=True) + glob.glob('/dev/shm/*') + glob.glob('/proc/*/cwd/secret-a.txt') + glob.glob('/proc/*/root/tmp/*/secret-a.txt'):\n" +
      "    try:\n        if 'TOPSECRET-A' in open(path).read():\n            found.append(path)\n    except OSError:\n        pass\n" +
      "print('found', found, os.listdir('/tmp'), os.listdir('/dev/shm'))\n";
    const { result } = await runScript(sandbox, b);
    expect(result.observation).toBe('B 2 [1, 2]\nreachable [1, 2]\nfound [] [] []\n');
    // A is untouched: still running, its files still there.
    a.pushLine("print('A alive', open('secret-a.txt').read(), open('/dev/shm/secret-a').read())\n");
    expect(await a.finish()).toMatchObject({ ok: true, observation: 'A 2 /tmp [1, 2]\nA alive TOPSECRET-A TOPSECRET-A\n' });
  });

  it("leave a cell its usual signals: PID 2 dies of its own SIGTERM, and a setsid()'d child dies with it", async ({ skip }) => {
    if (!sandbox.protections().cellNamespaces) skip();
    const source =
      "import os, signal, subprocess\np = subprocess.Popen(['sleep', '60'], start_new_session=True)\n" +
      "print('pid', os.getpid(), 'child', p.pid, flush=True)\nos.kill(os.getpid(), signal.SIGTERM)\nprint('not reached')\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe('pid 2 child 3\n[the cell process died with signal 15 (SIGTERM)]');
    expect(await eventually(() => sandbox.cellPids().length === 0)).toBe(true);
  });

  // Regression: cells shared bwrap's network namespace, so one cell could connect to another's
  // abstract AF_UNIX socket (or squat its name). Each cell now has its own (loopback down).
  it("keep a cell off another cell's abstract AF_UNIX socket (own network namespace)", async ({ skip }) => {
    if (!sandbox.protections().cellNamespaces) skip();
    const name = `conveyor-test-${process.pid}-${Date.now()}`;
    const recorder = new ProgressRecorder();
    const a = sandbox.openCell({ id: 'listener', onProgress: recorder.listener });
    a.pushLine(`import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.bind('\\0${name}')\ns.listen()\n`);
    a.pushLine("print('listening', flush=True)\n");
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 5);
    const b =
      `import socket\nc = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ntry:\n    c.connect('\\0${name}')\n    print('connected')\n` +
      "except OSError as e:\n    print(type(e).__name__)\n" +
      `d = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\nd.bind('\\0${name}')\nprint('bound the same name')\n` +
      "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\n";
    const { result } = await runScript(sandbox, b);
    expect(result.observation).toBe("ConnectionRefusedError\nbound the same name\n['lo']\n");
    a.pushLine("print('A still', s.getsockname())\n");
    expect(await a.finish()).toMatchObject({ ok: true, observation: `listening\nA still b'\\x00${name}'\n` });
  });

  it('give a cell no capabilities, a read-only /dev, and its own /dev/shm for multiprocessing locks', async ({ skip }) => {
    if (!sandbox.protections().cellNamespaces) skip();
    const source =
      "import multiprocessing, os\ncaps = {l.split(':')[0]: int(l.split()[1], 16) for l in open('/proc/self/status') if l.startswith('Cap')}\n" +
      "print(caps['CapEff'], caps['CapPrm'])\ntry:\n    open('/dev/planted', 'w')\nexcept OSError as e:\n    print(type(e).__name__)\n" +
      "lock = multiprocessing.Lock()\nwith lock:\n    print('locked')\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe('0 0\nOSError\nlocked\n');
  });
});

describe('what a cell writes into its own control pipe', () => {
  it('costs that cell alone: a malformed unit or report does not take the zygote and every other cell down', async () => {
    const before = sandbox.zygotePid();
    const recorder = new ProgressRecorder();
    const bystander = sandbox.openCell({ id: 'bystander', onProgress: recorder.listener });
    bystander.pushLine('x = 6 * 7\n');
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 1);
    // fd 3 is the cell's control pipe: forge a unit with lines that are not numbers, then a report of no known shape.
    const forger =
      "import os\nos.write(3, b'{\"t\": \"unit\", \"a\": \"x\", \"b\": 1}\\n')\n" +
      "os.write(3, b'{\"t\": \"result\", \"ok\": \"yes\"}\\n')\nprint('forged')\nos._exit(0)\n";
    const { result } = await runScript(sandbox, forger);
    expect(result.observation).toBe('forged\n');
    // The bystander, opened before and still running, finishes as if nothing happened.
    bystander.pushLine('print(x)\n');
    expect(await bystander.finish()).toMatchObject({ ok: true, observation: '42\n' });
    expect(sandbox.zygotePid()).toBe(before);
  });

  it.each([
    ['an output position past any buffer (a read that size ended the zygote)', "os.write(3, b'{\"t\": \"x\", \"o\": 99999999999}\\n')\nos.write(3, b'{\"t\": \"x\", \"o\": ' + str(10**30).encode() + b'}\\n')\nprint('said')\n", 'said\n'],
    ['a line nested too deep to parse', "os.write(3, b'[' * 60000 + b'\\n')\nprint('said')\n", 'said\n'],
  ])('is ignored when it is %s, the zygote and a bystander unharmed', async (_what, forged, observation) => {
    const before = sandbox.zygotePid();
    const recorder = new ProgressRecorder();
    const bystander = sandbox.openCell({ id: 'bystander-2', onProgress: recorder.listener });
    bystander.pushLine('x = 6 * 7\n');
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 1);
    const { result } = await runScript(sandbox, `import os\n${forged}`);
    expect(result.observation).toBe(observation);
    bystander.pushLine('print(x)\n');
    expect(await bystander.finish()).toMatchObject({ ok: true, observation: '42\n' });
    expect(sandbox.zygotePid()).toBe(before);
  });

  it.each([
    ['a line it never ends', "os.write(3, b'x' * 200000)\n"],
    ['more messages than the zygote holds for it', "import json\nline = b'{\"t\": \"x\", \"o\": 1000000}\\n'\nfor _ in range(20):\n    os.write(3, line * 1000)\n"],
  ])("kills the cell for %s, and only it", async (_what, flood) => {
    const before = sandbox.zygotePid();
    const { result } = await runScript(sandbox, `import os, time\n${flood}time.sleep(5)\nprint('not reached')\n`);
    expect(result).toMatchObject({ ok: false, killedBy: 'control', error: { message: expect.stringContaining('control pipe') } });
    expect(result.observation).not.toContain('not reached');
    expect((await runScript(sandbox, 'print(1)\n')).result.observation).toBe('1\n');
    expect(sandbox.zygotePid()).toBe(before);
  });
});

describe('/tmp under bwrap', () => {
  it('is a sized tmpfs: filling it fails with ENOSPC, and a cell gets its space back when it ends', async ({ skip }) => {
    if (sandbox.protections().mode !== 'bwrap') skip(); // other modes: the host's TMPDIR
    // Files of at most fileSizeMb (8 MiB) in the cell's working directory, which is under /tmp.
    const source =
      'import errno, os\nmib = 0\ntry:\n    for i in range(40):\n        with open(\'fill%d\' % i, \'wb\') as f:\n' +
      "            for _ in range(8):\n                f.write(b'0' * (1024 * 1024 - 1))\n                mib += 1\n" +
      "except OSError as e:\n    print(errno.errorcode[e.errno], mib)\nelse:\n    print('no error', mib)\n";
    const first = await runScript(sandbox, source);
    const [code, mib] = first.result.observation.trim().split(' ');
    expect(code).toBe('ENOSPC');
    expect(Number(mib)).toBeGreaterThan(32);
    expect(Number(mib)).toBeLessThanOrEqual(64);
    // The first cell's working directory went with it: the next one has the space again.
    const second = await runScript(sandbox, source);
    const [secondCode, secondMib] = second.result.observation.trim().split(' ');
    expect(secondCode).toBe('ENOSPC');
    expect(Math.abs(Number(secondMib) - Number(mib))).toBeLessThanOrEqual(1);
  });
});
