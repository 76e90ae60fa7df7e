import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL, plainContentStream } from '../llm-client/fixtures/vllm-streams.ts';
import { pause, sseHeaders, startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { listingModels } from '../support/scripted-gateway.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));
const KIT = fileURLToPath(new URL('../../plugins/kit/index.ts', import.meta.url));
const WORD_COUNT = fileURLToPath(new URL('../../plugins/kit/examples/word-count-plugin.ts', import.meta.url));
const dir = suiteTempDir('conveyor-start-up-');

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** `conveyor serve --port 0 …` in a child process, once it says where it listens; `printed`: its stdout lines so far. */
async function serve(args: string[]): Promise<{ proc: ChildProcess; url: string; printed: string[]; stderr: () => string }> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = proc;
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const printed: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      printed.push(line);
      const match = /listening on (\S+\/v1)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`conveyor serve exited (${code}): ${stderr.slice(-1000)}`)));
  });
  return { proc, url, printed, stderr: () => stderr };
}

/** `conveyor serve` that must refuse to start: its exit status and stderr. */
async function refusedStart(args: string[]): Promise<{ code: number; stderr: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', '--sim-profile', 'fast-test', ...args], { timeout: 60_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
  );
}

/** A tool module in a folder of its own; `esm`: beside a package.json with {"type": "module"}. */
function moduleFile(name: string, source: string, { esm = true } = {}): string {
  const folder = path.join(dir, name.replace(/\W/g, '-'));
  mkdirSync(folder, { recursive: true });
  if (esm) writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(path.join(folder, name), source);
  return path.join(folder, name);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('conveyor serve: start-up failures of a tool module', () => {
  // Node ended the process with status 13 and nothing on stderr: the import's top-level await was
  // all the CLI's own top-level await waited on, and nothing else was left on the event loop.
  it('says in one line, status 1, that the Python interpreter cannot run, on the embedded simulator too (was: status 13 and nothing)', async () => {
    const { code, stderr } = await refusedStart(['--python', '/bin/false']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^conveyor: cannot run the Python interpreter \/bin\/false/);
  }, 60_000);

  it('stops with one line and status 1 when a module does not finish loading in time (config toolModuleLoadSeconds)', async () => {
    const module = moduleFile('never-loads.ts', 'await new Promise(() => {});\nexport default 1;\n');
    const config = path.join(dir, 'load-time.json');
    writeFileSync(config, JSON.stringify({ toolModuleLoadSeconds: 1 }));
    expect(await refusedStart(['--config', config, '--tool', module])).toEqual({
      code: 1,
      stderr: `conveyor: tool module ${module}: it did not finish loading within 1 s (a top-level await that never settles?)\n`,
    });
  }, 60_000);

  it("leads with the fix for a module Node loads as CommonJS, not with Node's words about require(esm) cycles", async () => {
    const module = moduleFile('commonjs-by-place.ts', `import { definePlugin } from ${JSON.stringify(KIT)};\nexport default definePlugin;\n`, { esm: false });
    const { code, stderr } = await refusedStart(['--tool', module]);
    expect(code).toBe(1);
    // Where Node reads such a file as an ES module anyway (its syntax detection), it loads, and is refused for what it exports.
    if (!/CommonJS|require\(\)/.test(stderr)) return void expect(stderr).toContain('its default export is not a plugin');
    expect(stderr).toMatch(
      new RegExp(
        `^conveyor: tool module ${escape(module)}: Node loaded it as CommonJS, and a plugin module is an ES module: ` +
          `${escape('put a package.json with {"type": "module"} beside it, or name it .mts (plugins/README.md); Node said: ')}[^\\n]+\\n$`,
      ),
    );
    expect(stderr).not.toContain('invariants mandated');
  }, 60_000);
});

describe('conveyor serve: a stdout whose reader has gone', () => {
  // `conveyor serve | head -1` died of an uncaught EPIPE from the banner's next console.log; and
  // with a reader that left later, SIGTERM's `shutting down…` line threw EPIPE and skipped the drain.
  it('keeps serving, and still drains the requests in flight on SIGTERM', async () => {
    let modelsAsked!: () => void;
    const modelsAnswered = new Promise<void>((resolve) => (modelsAsked = resolve));
    let answerChat!: () => void;
    const chatAnswered = new Promise<void>((resolve) => (answerChat = resolve));
    const upstream = await startTestUpstream(async (req, res) => {
      // The readiness probe waits until stdout is closed: the rest of the banner is written after that.
      if (req.method === 'GET') {
        await modelsAnswered;
        return listingModels(() => {}, [MODEL])(req, res, undefined);
      }
      await chatAnswered;
      sseHeaders(res);
      res.end(plainContentStream);
    });
    try {
      const { proc, url, stderr } = await serve(['--upstream', upstream.baseUrl, '--plugins', '{"python":false}']);
      proc.stdout!.destroy();
      modelsAsked();
      await eventually(() => upstream.requests.some((r) => r.method === 'GET'), 'the readiness probe is answered');
      await pause(500);
      expect(proc.exitCode).toBeNull();
      expect((await fetch(url.replace(/\/v1$/, '/health'))).status).toBe(200);

      // A request in flight when the signal comes, whose upstream answers during the grace period.
      const inFlight = fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await eventually(() => upstream.requests.some((r) => r.method === 'POST'), 'the request reaches the upstream');
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await pause(300);
      answerChat();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe('Grüße 👋 — 你好');
      expect(await exited).toEqual([0, null]);
      expect(stderr()).toBe('');
    } finally {
      await upstream.close();
    }
  }, 60_000);
});

describe('conveyor serve: the banner\'s "try:" example fits the settings', () => {
  /** The body of the banner's curl, once the banner is out. */
  async function printedExample(printed: string[]): Promise<Record<string, unknown> | undefined> {
    // The example's `-d` line comes after its `try:` line, perhaps in a later read of stdout.
    await eventually(() => printed.some((line) => line.startsWith("    -d '")), 'the banner is printed');
    const data = printed.find((line) => line.startsWith("    -d '"));
    return data === undefined ? undefined : (JSON.parse(data.slice("    -d '".length, -1)) as Record<string, unknown>);
  }

  // With the python tool off it printed the sine wave, whose script then ran nowhere.
  it('with the python tool off, prints a request that runs a tool that is on (the calculator), and it does', async () => {
    const { proc, url, printed } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--log-level', 'silent']);
    const example = await printedExample(printed);
    expect(example).toMatchObject({ stream: true, messages: [{ role: 'user', content: 'What is 200*701?' }] });
    const answer = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(example) });
    const events = await answer.text();
    expect(events).toMatch(/"type":"tool_call\.completed"[^\n]*"name":"calculator"[^\n]*"ok":true/);
    expect(events).toContain('140200');
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exited;
  }, 60_000);

  it('warns, keyless on an address other machines reach, that anyone who reaches it can run its tools; on loopback it does not', async () => {
    for (const host of ['0.0.0.0', '127.0.0.1']) {
      const { proc, printed } = await serve(['--host', host, '--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--log-level', 'silent']);
      await printedExample(printed);
      const warned = printed.some((line) => /^warning: no --api-key on 0\.0\.0\.0, which other machines can reach/.test(line));
      expect(warned, host).toBe(host === '0.0.0.0');
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    }
  }, 60_000);

  // With the author's own scenarios the shipped sine wave got the simulator's "No scenario matched".
  it("with the author's own scenarios (--sim-scenarios), says the request must match one of their rules", async () => {
    const scenarios = path.join(dir, 'scenarios');
    mkdirSync(scenarios, { recursive: true });
    writeFileSync(path.join(scenarios, 'hello.json'), JSON.stringify({ rules: [{ when: { lastUser: 'hello' }, reply: 'Hello to you.' }] }));
    const { proc, printed } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--sim-scenarios', scenarios, '--log-level', 'silent']);
    const example = await printedExample(printed);
    expect(printed).toContain('try: a request that a rule of your scenarios (--sim-scenarios) matches; the shipped ones are not loaded');
    expect(example).toMatchObject({ messages: [{ role: 'user', content: '<what your rule matches>' }] });
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exited;
  }, 60_000);
});

describe('conveyor serve: a signal during start-up', () => {
  /** `conveyor serve --tool <a module that waits on a file>` in a child process, once the module has begun loading. */
  async function startingUp(name: string): Promise<{ proc: ChildProcess; printed: string[]; release: () => void }> {
    const started = path.join(dir, `${name}.started`);
    const released = path.join(dir, `${name}.released`);
    const module = moduleFile(
      `${name}.ts`,
      [
        `import { existsSync, writeFileSync } from 'node:fs';`,
        `export { default } from ${JSON.stringify(WORD_COUNT)};`,
        `writeFileSync(${JSON.stringify(started)}, '');`,
        `while (!existsSync(${JSON.stringify(released)})) await new Promise((resolve) => setTimeout(resolve, 50));`,
      ].join('\n'),
    );
    const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--log-level', 'silent', '--tool', module], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    const printed: string[] = [];
    createInterface({ input: proc.stdout! }).on('line', (line) => printed.push(line));
    // A CLI start takes seconds on a shared machine (tsx, the gateway's imports): more than eventually's default 10 s allows.
    await eventually(() => existsSync(started), 'the tool module begins loading', 45_000);
    return { proc, printed, release: () => writeFileSync(released, '') };
  }

  // Node's default ended the process at once, status 143 and not a word, closing nothing it had started.
  it('says so, and stops with status 0 once start-up is done, printing no banner', async () => {
    const { proc, printed, release } = await startingUp('slow-then-stopped');
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await eventually(() => printed.some((line) => line.startsWith('SIGTERM during start-up')), 'the signal is acknowledged');
    expect(proc.exitCode).toBeNull();
    release();
    expect(await exited).toEqual([0, null]);
    expect(printed).toContain('SIGTERM during start-up: stopping once it is done (SIGTERM again to stop now)…');
    expect(printed.some((line) => line.includes('listening on'))).toBe(false);
  }, 60_000);

  it('stops at once, status 1, on a second signal before start-up is done', async () => {
    const { proc, printed } = await startingUp('slow-then-stopped-twice');
    const exited = once(proc, 'exit');
    proc.kill('SIGINT');
    await eventually(() => printed.some((line) => line.startsWith('SIGINT during start-up')), 'the signal is acknowledged');
    proc.kill('SIGINT');
    expect(await exited).toEqual([1, null]);
    expect(printed).toContain('SIGINT again: stopping now, during start-up');
  }, 60_000);
});
