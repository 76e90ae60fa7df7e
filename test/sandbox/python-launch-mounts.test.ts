import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findExecutable, inspectInterpreter, planLaunch, stageScripts, tmpfsBytes } from '../../sandbox/python-launch.ts';
import { FILL_SCRIPT } from '../support/fill-script.ts';

const run = promisify(execFile);

describe("the zygote's bwrap mounts", () => {
  // What a cell sees where the kernel refuses per-cell namespaces (it then shares the zygote's
  // /dev): run in the zygote's place, with the zygote's command line.
  it.skipIf(!findExecutable('bwrap') || !existsSync('/usr/bin/python3'))('bound /dev/shm like /tmp and leave /dev read-only (host RAM)', async () => {
    const interpreter = await inspectInterpreter('/usr/bin/python3');
    const staging = stageScripts();
    try {
      const limits = { memoryMb: 2, fileSizeMb: 1 };
      expect(tmpfsBytes(limits)).toBe(2 * 1024 * 1024);
      const plan = planLaunch('bwrap', { interpreter, staging, config: '{}', tmpBytes: tmpfsBytes(limits) });
      const args = [...plan.args.slice(0, plan.args.indexOf('--') + 1), interpreter.executable, '-I', '-c', FILL_SCRIPT, '/dev/shm/fill', '/dev/planted', '/tmp/fill'];
      const { stdout } = await run(plan.command, args, { env: plan.env, uid: plan.uid, gid: plan.gid });
      // Before: 'wrote wrote ENOSPC' — 16 MiB each in an unsized /dev/shm and /dev.
      expect(stdout.trim()).toBe('ENOSPC EROFS ENOSPC');
    } finally {
      rmSync(staging.root, { recursive: true, force: true });
    }
  });
});
