import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { maxCpuMsInTree, processCpuMs } from '../../sandbox/process-tree.ts';

describe('maxCpuMsInTree', () => {
  it("finds the busiest process of a tree, a grandchild's included (RLIMIT_CPU holds per process)", async () => {
    // A parent that idles, and its child that burns 500 ms of CPU, then idles too. Counted in CPU
    // time, not wall time: a 3 s busy loop given a tenth of a core on a shared machine burns too little.
    const burn = 'const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; }; while (cpu() < 500000); setTimeout(() => {}, 30000)';
    const script = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(burn)}], { stdio: 'ignore' }); setTimeout(() => {}, 30000)`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: 'ignore', detached: true });
    try {
      // Polled, for up to 20 s: on a busy machine the loop gets less than a core.
      for (let i = 0; i < 400 && !(maxCpuMsInTree(parent.pid!) >= 300); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      const own = processCpuMs(parent.pid!);
      const max = maxCpuMsInTree(parent.pid!);
      expect(max).toBeGreaterThanOrEqual(300);
      expect(max).toBeGreaterThan(own);
      expect(Number.isNaN(maxCpuMsInTree(2 ** 22 + 12345))).toBe(true);
    } finally {
      process.kill(-parent.pid!, 'SIGKILL');
    }
  });
});
