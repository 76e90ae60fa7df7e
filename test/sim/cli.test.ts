import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';
import { postChat, allSseData, streamedText } from './sim-test-helpers.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

async function startCli(args: string[] = []): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--port', '0', '--profile', 'fast-test', ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  const lines = createInterface({ input: proc.stdout! });
  const [url] = (await once(lines, 'line')) as [string];
  return { proc, url };
}

describe('sim/cli.ts', () => {
  const udsDir = suiteTempDir('sim-uds-');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`prints the URL, serves, and exits cleanly on ${signal}`, async () => {
      const { proc, url } = await startCli();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const res = await postChat(url, { messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 3 });
      expect(streamedText(await allSseData(res)).length).toBeGreaterThan(0);

      const exited = once(proc, 'exit');
      proc.kill(signal);
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    });
  }

  it('--uds PATH: listens on a Unix domain socket, as vLLM does, prints unix:PATH:/v1 and removes the socket on exit', async () => {
    const socket = join(udsDir, 'sim.sock');
    const { proc, url } = await startCli(['--uds', socket]);
    expect(url).toBe(`unix:${socket}:/v1`);
    const models = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      request({ socketPath: socket, path: '/v1/models' }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode, body }));
      }).on('error', reject).end();
    });
    expect(models.status).toBe(200);
    expect(models.body).toContain('"object":"list"');
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exited;
    expect(existsSync(socket)).toBe(false);
  });

  it('--enable-auto-tool-choice --tool-call-parser mistral: tool calls leave as tool_calls', async () => {
    const { url } = await startCli(['--enable-auto-tool-choice', '--tool-call-parser', 'mistral']);
    const res = await postChat(url, {
      messages: [{ role: 'user', content: 'What is 200*701?' }],
      tools: [{ type: 'function', function: { name: 'calculator' } }],
    });
    const choice = ((await res.json()) as { choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ function: unknown }> } }> }).choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls.map((c) => c.function)).toEqual([{ name: 'calculator', arguments: '{"expression": "200*701"}' }]);
  });

  it('refuses --enable-auto-tool-choice without --tool-call-parser, as vLLM does', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--port', '0', '--enable-auto-tool-choice'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(stderr).toContain('--enable-auto-tool-choice needs --tool-call-parser');
  });
});
