import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The simulator in its own process, so its engine loop never waits behind the gateway's event
 * loop: benchmark timings then reflect the gateway, not a shared CPU thread.
 */
export async function spawnSim(profile: string): Promise<{ url: string; close(): Promise<void> }> {
  const cli = fileURLToPath(new URL('../sim/cli.ts', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', cli, '--port', '0', '--profile', profile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`simulator exited with code ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(line.trim()));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
