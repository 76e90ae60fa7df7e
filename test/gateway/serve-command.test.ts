import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantPids, readProcessTable } from '../../sandbox/process-tree.ts';
import { eventually, SINE_STDLIB_REQUEST } from '../support/conveyor-fixture.ts';

const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** `conveyor serve` as `npm start` runs it (bin/conveyor.js: tsx on Node 20, Node's own type stripping on 22/24). */
async function serve(): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--sim-profile', 'fast-test'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const lines = createInterface({ input: proc.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /listening on (\S+\/v1)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`conveyor serve exited (${code}): ${stderr.slice(-1000)}`)));
  });
  return { proc, url };
}

describe('conveyor serve (the main job) in its own process', () => {
  it('serves the official openai client, runs the python tool in its sandbox, and leaves nothing behind on SIGTERM', async () => {
    const { proc, url } = await serve();
    const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const runner = client.chat.completions.stream({ ...SINE_STDLIB_REQUEST, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content).toContain('samples=13 peak=1.000');
    // The sandbox's processes (Python fork server, warm spares) are the gateway's descendants.
    const sandboxPids = descendantPids(proc.pid!);
    expect(sandboxPids.length).toBeGreaterThan(0);

    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const alive = () => {
      const table = readProcessTable();
      return sandboxPids.filter((pid) => !['Z', 'X', undefined].includes(table.get(pid)?.state));
    };
    await eventually(() => alive().length === 0, `the gateway's sandbox processes ${sandboxPids.join(', ')} are gone`);
  }, 60_000);

  it('reports a mistake the user can fix in one line and exit status 1, without a stack trace', async () => {
    const { proc, url } = await serve();
    const port = new URL(url).port;
    const attempts = [
      { args: ['--sim-profile', 'no-such-profile'], message: 'conveyor: timing profile "no-such-profile" not found' },
      { args: ['--port', port, '--sim-profile', 'fast-test'], message: 'conveyor: listen EADDRINUSE' },
      { args: ['--upstream', 'http://127.0.0.1:9/v1,not-a-url'], message: 'conveyor: invalid gateway configuration' },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'], message: 'a replica is listed twice' },
    ];
    for (const { args, message } of attempts) {
      const failed = await promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', ...args], { timeout: 30_000 }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(message);
      expect(failed?.stderr).not.toMatch(/^\s+at /m);
    }
    proc.kill('SIGTERM');
    await once(proc, 'exit');
  }, 60_000);
});
