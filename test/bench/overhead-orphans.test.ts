import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readProcessTable } from '../../sandbox/process-tree.ts';

const root = path.resolve(import.meta.dirname, '../..');

function alive(pid: number): boolean {
  const state = readProcessTable().get(pid)?.state;
  return state !== undefined && state !== 'Z';
}

// bench/README.md: "A bench killed outright (SIGKILL, the OOM killer) still takes its simulator
// down". The overhead, parser-cpu and forward benches' simulator and Portkey did not: both stayed
// up, orphaned, on their ports (only our gateway left, on its IPC channel's close).
describe('the overhead bench killed outright (SIGKILL)', () => {
  it('takes its simulator, our gateway and Portkey down with it', async () => {
    const bench = spawn(process.execPath, ['--import', 'tsx', 'test/bench/fixtures/overhead-servers.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let pids: number[] = [];
    try {
      const [line] = (await once(createInterface({ input: bench.stdout! }), 'line')) as [string];
      pids = Object.values(JSON.parse(line) as Record<string, number | undefined>).filter((p): p is number => p !== undefined);
      expect(pids.length).toBeGreaterThanOrEqual(2);
      bench.kill('SIGKILL');
      const deadline = Date.now() + 10_000;
      while (pids.some(alive) && Date.now() < deadline) await sleep(100);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      bench.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);
});
