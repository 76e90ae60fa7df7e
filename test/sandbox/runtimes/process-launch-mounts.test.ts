import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  it.skipIf(!findExecutable('bwrap'))('hides credential files and .git folders at any depth of a bound folder, and leaves the rest readable', async () => {
    const tree = mkdtempSync(join(tmpdir(), 'conveyor-secrets-'));
    try {
      mkdirSync(join(tree, 'deploy', 'certs'), { recursive: true });
      mkdirSync(join(tree, 'vendor', 'lib', '.git'), { recursive: true });
      writeFileSync(join(tree, 'deploy', '.env.production'), 'OPENAI_API_KEY=sk-nested');
      writeFileSync(join(tree, 'deploy', 'certs', 'server.key'), 'PRIVATE');
      writeFileSync(join(tree, 'vendor', 'lib', '.git', 'config'), 'token');
      writeFileSync(join(tree, 'deploy', 'app.json'), 'public');
      chmodSync(tree, 0o755);
      const read = "import sys\nfor p in sys.argv[1:]:\n    try:\n        print(repr(open(p).read()))\n    except OSError as e:\n        print(type(e).__name__)\n";
      const python = launcherPython();
      const plan = planProcessLaunch(
        { mode: 'bwrap', launcher: 'none', python, seccomp: false, uidDrop: isRoot },
        {
          argv: [python!, '-I', '-c', read, ...['deploy/.env.production', 'deploy/certs/server.key', 'vendor/lib/.git/config', 'deploy/app.json'].map((p) => join(tree, p))],
          readOnlyPaths: [tree],
          limits: DEFAULT_PROCESS_LIMITS,
          dataMb: DEFAULT_PROCESS_LIMITS.memoryMb,
          cpuSeconds: 10,
          uid: isRoot ? 65534 : null,
          hostCwd: tmpdir(),
        },
      );
      const { stdout } = await run(plan.command, plan.args, { env: plan.env, cwd: plan.cwd, uid: plan.uid, gid: plan.gid });
      // Before, only a bound folder's own top level was masked: both nested files and the .git read out.
      // A masked file is /dev/null, which the mount's nodev makes unopenable (or empty).
      const [env, key, git, app] = stdout.trim().split('\n');
      expect([env, key]).toEqual([expect.stringMatching(/^(''|PermissionError)$/), expect.stringMatching(/^(''|PermissionError)$/)]);
      expect([git, app]).toEqual(['FileNotFoundError', "'public'"]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
