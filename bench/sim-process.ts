import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ToolCallParserName } from '../sim/sim-server.ts';
import { reapOnExit } from './child-reaper.ts';

export interface SimProcess {
  /** OpenAI base URL, ending in /v1. */
  url: string;
  close(): Promise<void>;
}

/**
 * The simulator in its own process, so its engine loop never waits behind the gateway's event
 * loop: benchmark timings then reflect the gateway, not a shared CPU thread. `scenarios`: the
 * scenario folders to load instead of the shipped sim/scenarios; `toolCallParser`: vLLM's server-side
 * tool parsing (sim/README.md).
 */
export async function spawnSim(profile: string, options: { scenarios?: readonly string[]; toolCallParser?: ToolCallParserName } = {}): Promise<SimProcess> {
  const cli = fileURLToPath(new URL('../sim/cli.ts', import.meta.url));
  // --exit-with-stdin: the bench's end closes the pipe, however it ends (a SIGKILL runs no reaper).
  const args = ['--import', 'tsx', cli, '--port', '0', '--exit-with-stdin', '--profile', profile, ...(options.scenarios ?? []).flatMap((dir) => ['--scenarios', dir])];
  if (options.toolCallParser) args.push('--enable-auto-tool-choice', '--tool-call-parser', options.toolCallParser);
  // Its stderr is kept, not passed through: its shutdown line would break into the progress bars.
  // It is shown when the simulator dies on its own, which is when it matters.
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  reapOnExit(child);
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  let started = false;
  let closing = false;
  child.once('exit', (code, signal) => {
    if (started && !closing) console.error(`bench: the simulator exited (${signal ?? `code ${code}`})${stderr ? `:\n${stderr.trimEnd()}` : ''}`);
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`simulator exited with code ${code}${stderr ? `: ${stderr.trim()}` : ''}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(line.trim()));
  });
  started = true;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
