import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findExecutable, PYTHON_SOURCE_DIR } from '../../sandbox/python-launch.ts';
import { DEFAULT_PROCESS_LIMITS, LAUNCHER_SCRIPT, launcherPython, planProcessLaunch } from '../../sandbox/runtimes/process-launch.ts';
import { killAll } from './runtimes/runtime-test-helpers.ts';

const python = launcherPython() ?? 'python3';

/** Runs a command until it and every process that inherited its stdout/stderr are gone. */
function outcome(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function exitedPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

/** Processes whose command line holds `arg` (a token only this test uses). */
function pidsWithArg(arg: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(arg);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether `condition` holds within `tries` polls 10 ms apart, and at least that long by the clock. */
async function eventually(condition: () => boolean, tries = 300): Promise<boolean> {
  const until = Date.now() + tries * 10;
  while (!condition()) {
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

describe('a parent that dies before PR_SET_PDEATHSIG is armed', () => {
  it('stops exec_launcher before the plugin runs (the gateway died while Python started)', async () => {
    const config = (parentPid: number): string => JSON.stringify({ rlimits: {}, parentPid });
    const orphaned = await outcome(python, ['-I', LAUNCHER_SCRIPT, config(await exitedPid()), '--', '/bin/echo', 'plugin ran']);
    expect(orphaned.stdout).toBe(''); // before: 'plugin ran'
    expect(orphaned.code).toBe(121);
    expect(orphaned.stderr).toMatch(/died before PR_SET_PDEATHSIG was armed/);
    const spawned = await outcome(python, ['-I', LAUNCHER_SCRIPT, config(process.pid), '--', '/bin/echo', 'plugin ran']);
    expect(spawned).toMatchObject({ code: 0, stdout: 'plugin ran\n' });
  });

  it("stops the PID namespace's init when the launcher outside died between its fork and the init's prctl", async () => {
    // The race made certain: the forked init waits until the outer launcher is gone.
    const script = `import os, sys, time
sys.path.insert(0, sys.argv[1])
import exec_launcher
fork = os.fork
def fork_then_lose_parent():
    parent = os.getpid()
    pid = fork()
    while pid == 0 and os.getppid() == parent:
        time.sleep(0.005)
    return pid
os.fork = fork_then_lose_parent
exec_launcher.wait_for = lambda child, reap_all: os._exit(0)
def mount_proc():
    print('the orphaned init went on', flush=True)
    os._exit(0)
exec_launcher.mount_proc = mount_proc
exec_launcher.enter_pid_namespace()`;
    const { stdout, stderr } = await outcome(python, ['-I', '-B', '-c', script, dirname(LAUNCHER_SCRIPT)]);
    expect(stdout).toBe(''); // before: 'the orphaned init went on'
    expect(stderr).toMatch(/died before PR_SET_PDEATHSIG was armed/);
  });

  it.skipIf(!findExecutable('unshare'))('takes a netns plugin down with a gateway killed by SIGKILL', async () => {
    const token = `600.${process.pid}${Date.now() % 100_000}`;
    const plan = planProcessLaunch(
      { mode: 'netns', launcher: 'python', python, seccomp: false, uidDrop: false },
      { argv: ['/bin/sleep', token], readOnlyPaths: [], limits: DEFAULT_PROCESS_LIMITS, dataMb: 256, cpuSeconds: 10, uid: null, hostCwd: tmpdir() },
    );
    // A stand-in gateway: it spawns the plan as its own (the launcher's parentPid is its pid).
    const gateway = `import json, os, subprocess, sys, time
def own(arg):
    if not arg.startswith('{'):
        return arg
    return json.dumps(dict(json.loads(arg), parentPid=os.getpid()))
subprocess.Popen([sys.argv[1]] + [own(a) for a in json.loads(sys.argv[2])], env=json.loads(sys.argv[3]))
time.sleep(60)`;
    // Under CI load a launch can fail before the plugin starts (one clean-clone run on Node 24
    // never saw it): that says nothing of the parent-death signal, so it is tried again, and
    // what the launcher said is in the failure if it never starts.
    let stand: ChildProcess = spawn('true');
    let said = '';
    let started = false;
    for (let attempt = 0; attempt < 3 && !started; attempt++) {
      stand.kill('SIGKILL');
      stand = spawn(python, ['-I', '-c', gateway, plan.command, JSON.stringify(plan.args), JSON.stringify(plan.env)], { stdio: ['ignore', 'ignore', 'pipe'] });
      stand.stderr!.on('data', (d: Buffer) => (said += d.toString()));
      started = await eventually(() => pidsWithArg(token).length > 0, 1000);
    }
    try {
      expect(started, `the plugin never started: ${said}`).toBe(true);
      stand.kill('SIGKILL');
      // Before, the launcher outside the PID namespace never armed its signal: init and plugin ran on.
      expect(await eventually(() => pidsWithArg(token).length === 0, 1000)).toBe(true);
    } finally {
      stand.kill('SIGKILL');
      killAll(pidsWithArg(token));
    }
  });
});

describe('process_tree.die_with_parent (every cell and namespace init)', () => {
  it('arms SIGKILL, and says False where the parent that forked is already gone', async () => {
    const script = `import ctypes, os, sys, time
sys.path.insert(0, sys.argv[1])
import process_tree
parent = os.getpid()
if os.fork() == 0:
    while os.getppid() == parent:
        time.sleep(0.005)
    print('gone', process_tree.die_with_parent(parent), flush=True)
    os._exit(0)
armed = ctypes.c_int(0)
alive = process_tree.die_with_parent(os.getppid())
ctypes.CDLL(None).prctl(2, ctypes.byref(armed), 0, 0, 0)  # PR_GET_PDEATHSIG
print('alive', alive, armed.value, flush=True)`;
    const { stdout } = await outcome(python, ['-I', '-B', '-c', script, PYTHON_SOURCE_DIR]);
    expect(stdout.split('\n').sort()).toEqual(['', 'alive True 9', 'gone False']);
  });
});
