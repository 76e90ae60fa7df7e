import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

/** The CLI as `npm start` runs it (bin/conveyor.js: tsx on Node 20, Node's own type stripping on 22/24). */
export const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));

export interface ServedConveyor {
  proc: ChildProcess;
  /** The `/v1` base URL its banner printed. */
  url: string;
  /** Its JSON log lines (access lines, warnings), as they come. */
  logLines: unknown[];
  /** Its other stdout lines (the banner). */
  printed: string[];
}

/**
 * For a test file that starts `conveyor serve` in its own process: call once at the top level. The
 * process a test started is killed after it, if it still runs; `adopt` hands it one started otherwise.
 */
export function servedConveyors(): { serve(args?: string[], env?: NodeJS.ProcessEnv): Promise<ServedConveyor>; adopt(proc: ChildProcess): void } {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
  });
  return {
    adopt: (proc) => void (child = proc),
    async serve(args = ['--sim-profile', 'fast-test'], env = process.env) {
      const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
      child = proc;
      let stderr = '';
      proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      const lines = createInterface({ input: proc.stdout! });
      const logLines: unknown[] = [];
      const printed: string[] = [];
      const url = await new Promise<string>((resolve, reject) => {
        lines.on('line', (line) => {
          if (line.startsWith('{')) logLines.push(JSON.parse(line));
          else printed.push(line);
          const match = /listening on (\S+\/v1)$/.exec(line);
          if (match) resolve(match[1]!);
        });
        proc.once('exit', (code) => reject(new Error(`conveyor serve exited (${code}): ${stderr.slice(-1000)}`)));
      });
      return { proc, url, logLines, printed };
    },
  };
}
