import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable } from '../../../sandbox/python-launch.ts';
import { DEFAULT_PROCESS_LIMITS, launcherPython, planProcessLaunch } from '../../../sandbox/runtimes/process-launch.ts';
import { FILL_SCRIPT } from '../../support/fill-script.ts';

const run = promisify(execFile);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const checkout = mkdtempSync(join(tmpdir(), 'conveyor-mounts-'));
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

describe('writable mounts of a bwrap plugin process', () => {
  it.skipIf(!findExecutable('bwrap'))('bounds /dev/shm by diskMb and leaves /dev and a hidden .git read-only (host RAM)', async () => {
    // A read-only path with a .git, which the launch hides under an empty tmpfs.
    mkdirSync(join(checkout, '.git'));
    chmodSync(checkout, 0o755);
    const python = launcherPython();
    expect(python).not.toBeNull();
    const plan = planProcessLaunch(
      { mode: 'bwrap', launcher: 'none', python, seccomp: false, uidDrop: isRoot },
      {
        argv: [python!, '-I', '-c', FILL_SCRIPT, '/dev/shm/fill', '/dev/planted', join(checkout, '.git', 'planted'), '/tmp/fill'],
        readOnlyPaths: [checkout],
        limits: { ...DEFAULT_PROCESS_LIMITS, diskMb: 4 },
        dataMb: DEFAULT_PROCESS_LIMITS.memoryMb,
        cpuSeconds: 10,
        // As root, plugins run as a uid of their own, the owner of every tmpfs bwrap makes.
        uid: isRoot ? 65534 : null,
        hostCwd: tmpdir(),
      },
    );
    const { stdout } = await run(plan.command, plan.args, { env: plan.env, cwd: plan.cwd, uid: plan.uid, gid: plan.gid });
    // Before: 'wrote wrote wrote ENOSPC' — 16 MiB each in an unsized /dev/shm, /dev and .git.
    expect(stdout.trim()).toBe('ENOSPC EROFS EROFS ENOSPC');
  });
});
