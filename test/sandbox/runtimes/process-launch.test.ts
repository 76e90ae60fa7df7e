import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROCESS_LIMITS, launcherPython, nodeDataHeadroomMb, planProcessLaunch, v8CodeRangeMb } from '../../../sandbox/runtimes/process-launch.ts';

const run = promisify(execFile);

/** Prints the process's limits from a worker thread: a second isolate, started under the limit. */
const TWO_ISOLATES = `const { Worker } = require('node:worker_threads');
new Worker("process.stdout.write(require('node:fs').readFileSync('/proc/self/limits', 'utf8'))", { eval: true });`;

describe('RLIMIT_DATA for a Node child', () => {
  it("counts each isolate's V8 code range where Node maps it writable and executable, so a plugin process starts under its limit", async () => {
    const maps = await readFile('/proc/self/maps', 'utf8');
    const rwxMb = Math.max(
      0,
      ...maps
        .split('\n')
        .filter((line) => line.split(' ')[1] === 'rwxp')
        .map((line) => {
          const [start, end] = line.split(' ')[0]!.split('-').map((hex) => Number.parseInt(hex, 16)) as [number, number];
          return (end - start) / (1024 * 1024);
        }),
    );
    // One isolate's code range (Node 24: ~510 MiB; Node 20 and 22: none), 256 MiB for Node's own data.
    expect(v8CodeRangeMb()).toBe(Math.ceil(rwxMb));
    expect(nodeDataHeadroomMb(2)).toBe(256 + 2 * v8CodeRangeMb());

    const python = launcherPython(); // Debian's python3, a requirement (README)
    expect(python).not.toBeNull();
    const hostCwd = await mkdtemp(join(tmpdir(), 'conveyor-launch-'));
    try {
      const plan = planProcessLaunch(
        { mode: 'none', launcher: 'python', python: python!, seccomp: false, uidDrop: false },
        {
          // Two isolates, as a plugin process has (its main thread and tsx's hooks thread).
          argv: [process.execPath, '-e', TWO_ISOLATES],
          readOnlyPaths: [],
          limits: DEFAULT_PROCESS_LIMITS,
          dataMb: DEFAULT_PROCESS_LIMITS.memoryMb + nodeDataHeadroomMb(2),
          cpuSeconds: 10,
          uid: null,
          hostCwd,
        },
      );
      // Before the headroom counted the code range, Node 24 died here: "Failed to reserve virtual memory for CodeRange".
      const { stdout } = await run(plan.command, plan.args, { env: plan.env, cwd: plan.cwd });
      const dataBytes = (DEFAULT_PROCESS_LIMITS.memoryMb + nodeDataHeadroomMb(2)) * 1024 * 1024;
      expect(stdout).toMatch(new RegExp(`Max data size\\s+${dataBytes}\\s+${dataBytes}\\s+bytes`));
    } finally {
      await rm(hostCwd, { recursive: true, force: true });
    }
  });
});
