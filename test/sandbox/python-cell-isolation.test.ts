import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { ProgressRecorder, runScript } from './python-test-helpers.ts';

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
      `print(attempt('/proc/${pid}/mem', ${address}), attempt('/proc/${pid}/fd'), attempt('/proc/%d/mem' % os.getppid(), 4096), attempt('/proc/%d/fd' % os.getppid()))\n`;
    const { result } = await runScript(sandbox, source);
    victim.kill('abort');
    await victim.finish();
    if (sandbox.protections().mode === 'bwrap' || !(await cellIsRoot())) {
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
});

describe('the zygote under bwrap is the sandbox\'s PID 1', () => {
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
