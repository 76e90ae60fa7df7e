import { afterEach } from 'vitest';
import { DEFAULT_PROCESS_LIMITS } from '../../../sandbox/runtimes/process-launch.ts';
import type { ProcessPoolOptions, ProcessRecipe } from '../../../sandbox/runtimes/process-pool.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

/**
 * Children for tests that act while a plugin process is still coming up (a close, an abort):
 * each says so on stderr (the pool's onOutput) before it would say `ready`, so the test acts at a
 * point where the child certainly exists and is not ready yet.
 */
export const STARTING = 'starting up';

/** A child that announces itself and then never says `ready` (a slow or hung start-up). */
export const neverReady = ['/usr/bin/python3', '-c', `import sys, time\nsys.stderr.write(${JSON.stringify(`${STARTING}\n`)})\nsys.stderr.flush()\ntime.sleep(600)`];

/** A child that comes up at once and serves nothing. */
export const readyAtOnce = ['/usr/bin/python3', '-c', 'import json, os, socket, time\nch = socket.socket(fileno=3)\nch.sendall((json.dumps({"t": "ready", "pid": os.getpid(), "guest": "none"}) + "\\n").encode())\ntime.sleep(600)'];

/** A recipe that runs `argv` as it is, under the default limits. */
export function bareRecipe(name: string, argv: string[]): ProcessRecipe {
  return { key: `${name}\n${argv.join('\0')}`, label: name, argv, readOnlyPaths: [], limits: DEFAULT_PROCESS_LIMITS, dataMb: DEFAULT_PROCESS_LIMITS.memoryMb, cpuSeconds: null };
}

/**
 * Pools for one test at a time, closed after each test, whose start-up limit is beyond the test's
 * own: only the test's close or abort ends their start-ups. `output()` is what their children
 * wrote on stdout and stderr since the last `open`.
 */
export function startingPools(): { open(options: ProcessPoolOptions): RuntimePools; output(): string } {
  let pools: RuntimePools | null = null;
  let output = '';
  afterEach(async () => {
    await pools?.close();
    pools = null;
  });
  return {
    open(options) {
      output = '';
      pools = createRuntimePools({ process: { startupTimeoutMs: 600_000, onOutput: ({ text }) => (output += text), ...options } });
      return pools;
    },
    output: () => output,
  };
}
