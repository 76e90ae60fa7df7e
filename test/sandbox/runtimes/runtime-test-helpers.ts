import { pidsOfUids } from '../../../sandbox/runtimes/uid-processes.ts';
import type { RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { descendantPids, readProcessTable } from '../../../sandbox/process-tree.ts';

export const fixture = (name: string): URL => new URL(`./fixtures/${name}`, import.meta.url);

/**
 * Polls `condition` until it holds, at most `tries` times `everyMs` apart. The default (10 s or more
 * under load) is for waits on other processes (an exit, a line): a passing test returns at once.
 */
export async function eventually(condition: () => boolean, tries = 1000, everyMs = 10): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return condition();
}

/**
 * SIGKILLs each of `pids` still running. A listing of a process tree goes stale at once: a child
 * dies with its parent (PDEATHSIG) or is reaped between the listing and its kill (ESRCH).
 */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}

/**
 * Processes a runtime left behind: the pools' own bookkeeping, plus, seen from /proc, anything
 * below this test process that a plugin could have started (sandbox wrappers, node, shells)
 * and anything still running under the sandbox uids this pool handed out.
 */
export function leftovers(pools: RuntimePools, uids: number[] = [], keep: number[] = pools.isolate.livePids()): string[] {
  const table = readProcessTable();
  // The shared isolate host (started by report() where isolated-vm works) lives on by design.
  const kept = new Set(keep.flatMap((pid) => [pid, ...descendantPids(pid, table)]));
  const suspicious = new Set(['bwrap', 'unshare', 'python3', 'sh', 'node', 'prlimit', 'esbuild']);
  const found = new Set<number>([...pools.livePids(), ...pidsOfUids(new Set(uids))]);
  for (const pid of descendantPids(process.pid, table)) {
    if (suspicious.has(table.get(pid)?.comm ?? '')) found.add(pid);
  }
  return [...found].filter((pid) => !kept.has(pid)).map((pid) => `${pid} ${table.get(pid)?.comm ?? '?'}`);
}

/** Sandbox uids a pool may hand out (root only): the first few above its base. */
export function sandboxUids(pools: RuntimePools, count = 64): number[] {
  return Array.from({ length: count }, (_, i) => pools.process.options.uidBase + 1 + i);
}

/**
 * argv of a plugin written in Python against the raw protocol (plugin-protocol.ts), without the
 * kit: it says `ready`, then runs `onMessage` for each message the gateway sends (Python lines,
 * `msg` the message read, `send(m)` writes a dict as one line).
 */
export function pythonProtocolPlugin(onMessage: readonly string[]): string[] {
  const program = [
    'import json, os, socket',
    'ch = socket.socket(fileno=3)',
    'send = lambda m: ch.sendall((json.dumps(m) + "\\n").encode())',
    'send({"t": "ready", "pid": os.getpid(), "guest": "none"})',
    'for line in ch.makefile("r", encoding="utf-8"):',
    '    msg = json.loads(line)',
    ...onMessage.map((line) => `    ${line}`),
  ];
  return ['/usr/bin/python3', '-c', program.join('\n')];
}
