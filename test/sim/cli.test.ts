import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { shippedProfileNames } from '../../sim/timing-profile.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { postChat, allSseData, streamedText } from './sim-test-helpers.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children = [];
});

async function startCli(args: string[] = []): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'sim/cli.ts', '--port', '0', '--profile', 'fast-test', ...args], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(proc);
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

  it('--exit-with-stdin: exits cleanly when its stdin closes (its parent gone, even by SIGKILL), and not before', async () => {
    const { proc, url } = await startCli(['--exit-with-stdin']);
    const res = await postChat(url, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(res.status).toBe(200);
    expect(proc.exitCode).toBeNull();
    const exited = once(proc, 'exit');
    proc.stdin!.end();
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

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
    const { code, stderr } = await runToExit(['--port', '0', '--enable-auto-tool-choice']);
    expect(code).not.toBe(0);
    expect(stderr).toContain('--enable-auto-tool-choice needs --tool-call-parser');
  });

  it('takes the model as `vllm serve MODEL` does, with --max-model-len and --api-key', async () => {
    const { url } = await startCli(['mistralai/Mistral-7B-Instruct-v0.3', '--max-model-len', '2048', '--api-key', 'k1']);
    expect((await fetch(`${url}/models`)).status).toBe(401);
    const models = (await (await fetch(`${url}/models`, { headers: { authorization: 'Bearer k1' } })).json()) as { data: Array<{ id: string; max_model_len: number }> };
    expect(models.data[0]).toMatchObject({ id: 'mistralai/Mistral-7B-Instruct-v0.3', max_model_len: 2048 });
    expect((await fetch(url.replace(/\/v1$/, '/health'))).status).toBe(200);
  });

  it('serves the model under --served-model-name when given, as vLLM does', async () => {
    const { url } = await startCli(['--model', 'mistralai/Mistral-7B-Instruct-v0.3', '--served-model-name', 'mistral']);
    const res = await postChat(url, { model: 'mistral', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(((await res.json()) as { model: string }).model).toBe('mistral');
    expect((await postChat(url, { model: 'mistralai/Mistral-7B-Instruct-v0.3', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(404);
    // /v1/models lists the served name, rooted at the model as loaded (vLLM's ModelCard root = model_path).
    const models = (await (await fetch(`${url}/models`)).json()) as { data: Array<{ id: string; root: string; parent: string | null }> };
    expect(models.data[0]).toMatchObject({ id: 'mistral', root: 'mistralai/Mistral-7B-Instruct-v0.3', parent: null });
    expect(models.data.slice(1).every((m) => m.parent === 'mistral')).toBe(true);
  });

  it('says in one line that the port is in use, and exits 1', async () => {
    const { url } = await startCli();
    const port = new URL(url).port;
    const { code, stderr } = await runToExit(['--port', port, '--profile', 'fast-test']);
    expect(code).toBe(1);
    expect(stderr).toBe(`sim: listen EADDRINUSE: address already in use 127.0.0.1:${port} (port ${port} is in use)\n`);
  });

  it('lists the shipped profiles when --profile names none of them', async () => {
    const { code, stderr } = await runToExit(['--port', '0', '--profile', 'mistral-7b-a100']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`shipped profiles: ${shippedProfileNames().join(', ')}`);
  });

  it('`npm run sim`: SIGTERM to npm closes the server (regression: sh kept the node child running)', async () => {
    // Its own process group, so that cleanup can reach a child the test failed to stop.
    const npm = spawn('npm', ['run', '--silent', 'sim', '--', '--port', '0', '--profile', 'fast-test'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    try {
      const [url] = (await once(createInterface({ input: npm.stdout! }), 'line')) as [string];
      expect((await fetch(`${url}/models`)).status).toBe(200);
      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      await exited;
      await waitUntilRefused(`${url}/models`);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
  });
});

async function runToExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'sim/cli.ts', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const [code] = (await once(proc, 'exit')) as [number | null];
  return { code, stderr };
}

/** Polls until nothing listens at `url`: npm may exit before the child it signalled has closed. */
async function waitUntilRefused(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await (await fetch(url)).arrayBuffer();
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error(`${url} still answers after npm exited`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
