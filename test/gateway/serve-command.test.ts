import { execFile, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { descendantPids, readProcessTable } from '../../sandbox/process-tree.ts';
import { eventually, SINE_STDLIB_REQUEST } from '../support/conveyor-fixture.ts';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { callThenAnswer, listingModels } from '../support/scripted-gateway.ts';
import { ensureSampleDatabase } from '../../plugins/database/sample-database.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { CLI, servedConveyors } from '../support/serve-process.ts';

const configDir = suiteTempDir('conveyor-serve-');

/** A model that calls word_count, then repeats what the tool said. */
const wordCountModel = listingModels(
  callThenAnswer({ name: 'word_count', arguments: { text: 'one two three' } }, (observation) => `The tool said: ${observation}.`),
  [MODEL],
);

const NOT_A_PLUGIN = fileURLToPath(new URL('../../core/errors.ts', import.meta.url));
const WORD_COUNT_PLUGIN = fileURLToPath(new URL('../../plugins/kit/examples/word-count-plugin.ts', import.meta.url));

const FAULTY_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/faulty-plugin.ts', import.meta.url));
const STRAY_REJECTION_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/stray-rejection-plugin.ts', import.meta.url));
const THROWING_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/throwing-calculator-plugin.ts', import.meta.url));
const LIMIT_TYPO_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/limit-typo-plugin.ts', import.meta.url));
const KIT = fileURLToPath(new URL('../../plugins/kit/index.ts', import.meta.url));

const { serve, adopt } = servedConveyors();

describe('conveyor serve (the main job) in its own process', () => {
  it('serves the official openai client, runs the python tool in its sandbox, and leaves nothing behind on SIGTERM', async () => {
    const { proc, url, logLines } = await serve();
    const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const { data: runner, response } = await client.chat.completions
      .create({ ...SINE_STDLIB_REQUEST, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming)
      .withResponse();
    let content = '';
    for await (const chunk of runner) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toContain('samples=13 peak=1.000');
    // Its access line: one JSON line on stdout, naming the request the response header named.
    const requestId = response.headers.get('x-conveyor-request-id');
    await eventually(() => logLines.some((l) => (l as { request_id?: string }).request_id === requestId), 'the access line is written');
    expect(logLines.find((l) => (l as { request_id?: string }).request_id === requestId)).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      stream: true,
      outcome: 'answer',
      rounds: 2,
      tool_calls: 1,
    });
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

  it("lets a python call finish after a terminal's Ctrl-C (SIGINT to the whole process group), within the shutdown grace", async () => {
    // Its own process group, as a shell's foreground job is: Ctrl-C signals every process in it.
    const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    adopt(proc);
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        const match = /listening on (\S+\/v1)$/.exec(line);
        if (match) resolve(match[1]!);
      });
      proc.once('exit', (code) => reject(new Error(`conveyor serve exited (${code})`)));
    });
    const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...SINE_STDLIB_REQUEST, stream: true }) });
    const reader = res.body!.getReader();
    let events = '';
    let signalled = false;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      events += Buffer.from(value).toString('utf8');
      // The python call has begun: the Ctrl-C comes while it runs.
      if (!signalled && events.includes('"type":"tool_call.started"')) {
        signalled = true;
        process.kill(-proc.pid!, 'SIGINT');
      }
    }
    expect(signalled).toBe(true);
    expect(events).toMatch(/"type":"tool_call\.completed"[^\n]*"ok":true/);
    expect(events).toContain('samples=13 peak=1.000');
    expect(events).not.toContain('sandbox process died');
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).toBe(0);
  }, 60_000);

  it('runs a tool author\'s plugin module given with --tool, in its own runtime, in front of a real upstream', async () => {
    const upstream = await startTestUpstream(wordCountModel);
    try {
      const { proc, url } = await serve(['--upstream', upstream.baseUrl, '--tool', WORD_COUNT_PLUGIN]);
      const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: MODEL,
        tools: [{ type: 'function', function: { name: 'word_count' } }],
        messages: [{ role: 'user', content: 'How many words in "one two three"?' }],
      });
      expect(answer.choices[0]?.message.content).toContain('The tool said: 3 words.');
      // The module's description and JSON Schema went upstream for the tool named by name alone.
      // At start it asked the upstream whether it is ready (GET /models), then the rounds came.
      expect(upstream.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions', 'POST /v1/chat/completions']);
      const sent = upstream.requests[1]?.body as { tools: Array<{ function: { description: string; parameters: { properties: object } } }> };
      expect(sent.tools[0]?.function.description).toMatch(/Counts the words/);
      expect(sent.tools[0]?.function.parameters.properties).toHaveProperty('text');
      // /health says which module the tool came from and where it runs.
      const health = (await (await fetch(url.replace(/\/v1$/, '/health'))).json()) as { plugins: Record<string, unknown> };
      expect(health.plugins['word_count']).toEqual({ runtime: 'process', module: WORD_COUNT_PLUGIN });
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    } finally {
      await upstream.close();
    }
  }, 60_000);

  it('takes its settings from --config FILE, paths relative to the file, with the options given on the command line winning', async () => {
    const upstream = await startTestUpstream(wordCountModel);
    try {
      const folder = path.join(configDir, 'etc');
      mkdirSync(folder, { recursive: true });
      const file = path.join(folder, 'conveyor.json');
      writeFileSync(
        file,
        JSON.stringify({
          gateway: { upstream: { baseUrl: upstream.baseUrl, model: 'file-model' }, maxToolRounds: 3 },
          toolModules: [path.relative(folder, WORD_COUNT_PLUGIN)],
          logLevel: 'silent',
        }),
      );
      const { proc, url, logLines } = await serve(['--config', file, '--model', MODEL]);
      const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: 'what-the-client-says',
        tools: [{ type: 'function', function: { name: 'word_count' } }],
        messages: [{ role: 'user', content: 'How many words in "one two three"?' }],
      });
      expect(answer.choices[0]?.message.content).toContain('The tool said: 3 words.');
      // --model beat the file's; the file's tool module ran; its log level silenced the access line.
      const rounds = upstream.requests.filter((r) => r.method === 'POST');
      expect(rounds.map((r) => (r.body as { model: string }).model)).toEqual([MODEL, MODEL]);
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
      expect(logLines).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 60_000);

  it("keeps the config file's API keys when CONVEYOR_API_KEYS is set but empty, rather than serving without any", async () => {
    const upstream = await startTestUpstream(wordCountModel);
    try {
      const file = path.join(configDir, 'keys.json');
      writeFileSync(file, JSON.stringify({ gateway: { apiKeys: ['file-key'], upstream: { baseUrl: upstream.baseUrl } }, plugins: { python: false }, logLevel: 'silent' }));
      const { proc, url } = await serve(['--config', file], { ...process.env, CONVEYOR_API_KEYS: '' });
      const ask = (key?: string) =>
        fetch(`${url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await ask()).status).toBe(401);
      expect((await ask('file-key')).status).toBe(200);
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    } finally {
      await upstream.close();
    }
  }, 60_000);

  it('lets the environment variables win over the config file, and reads one set to nothing as unset', async () => {
    const upstream = await startTestUpstream(wordCountModel);
    try {
      const file = path.join(configDir, 'env-over-file.json');
      writeFileSync(
        file,
        JSON.stringify({ gateway: { upstream: { baseUrl: upstream.baseUrl, apiKey: 'file-upstream-key' } }, sandbox: { python: '/nonexistent/python3' }, logLevel: 'silent' }),
      );
      // CONVEYOR_PYTHON once lost to the file's sandbox.python (the sandbox read it only as its own default);
      // an empty CONVEYOR_UPSTREAM_API_KEY once replaced the file's key with none, and an empty
      // CONVEYOR_LOG_LEVEL refused to start.
      const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
      const { proc, logLines } = await serve(['--config', file], { ...process.env, CONVEYOR_PYTHON: python, CONVEYOR_UPSTREAM_API_KEY: '', CONVEYOR_LOG_LEVEL: '' });
      await eventually(() => upstream.requests.some((r) => r.url.endsWith('/models')), 'the start-up readiness probe reaches the upstream');
      expect(upstream.requests.find((r) => r.url.endsWith('/models'))?.headers.authorization).toBe('Bearer file-upstream-key');
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      expect(logLines).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 60_000);

  it('shuts down gracefully on a SIGTERM that comes while the start-up readiness probe still waits on the upstream', async () => {
    // An upstream that accepts connections and never answers: the probe waits its 2 s while the gateway already serves.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const { port } = silent.address() as { port: number };
      const { proc, printed } = await serve(['--upstream', `http://127.0.0.1:${port}/v1`, '--plugins', '{"python":false}', '--log-level', 'silent']);
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      // It once died of the signal itself (exit null, SIGTERM): its handlers were installed after the probe.
      expect(await exited).toEqual([0, null]);
      expect(printed).toContain('shutting down: requests in flight have 30 s to finish (SIGTERM again to stop now)…');
      expect(printed).not.toContain('try:');
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 60_000);

  it("runs the tool author's own scenario (--sim-scenarios) on the simulator, calling a module given as a path with a query", async () => {
    const scenarios = path.join(configDir, 'scenarios');
    mkdirSync(scenarios, { recursive: true });
    const call = JSON.stringify([{ name: 'mode_tool', arguments: { mode: 'dev' } }]);
    writeFileSync(
      path.join(scenarios, 'mode-tool.json'),
      JSON.stringify({
        rules: [
          { when: { lastUser: 'try my tool', round: 1, lastRole: 'user' }, reply: `[TOOL_CALLS]${call}` },
          { when: { lastUser: 'try my tool', round: 2, lastRole: 'tool' }, reply: 'The tool said: {{tool_output}}' },
        ],
      }),
    );
    // A query that ends like a file name (a plugin's data file) once made tsx load the module as that type;
    // a comma in it (`note=a,b`) was read as the start of another module, `b` (tool-module-list.ts).
    const { proc, url } = await serve(['--sim-profile', 'fast-test', '--sim-scenarios', scenarios, '--tool', `${path.relative(process.cwd(), FAULTY_PLUGIN)}?name=mode_tool&note=a,b&data=rows.json`]);
    const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'mistral-7b-instruct-sim',
      tools: [{ type: 'function', function: { name: 'mode_tool' } }],
      messages: [{ role: 'user', content: 'Please try my tool.' }],
    });
    expect(answer.choices[0]?.message.content).toBe('The tool said: fine: dev');
    proc.kill('SIGTERM');
    await once(proc, 'exit');
  }, 60_000);

  it('starts in front of an upstream that is not up yet, says so, and reports itself not ready (503) while alive (200)', async () => {
    const { proc, url, printed } = await serve(['--upstream', 'http://127.0.0.1:9/v1']);
    const origin = new URL(url).origin;
    await eventually(() => printed.some((line) => line.startsWith('try:')), 'the banner is printed');
    expect(printed).toContain('  not ready yet: upstream http://127.0.0.1:9/v1 failed: connect ECONNREFUSED 127.0.0.1:9 (GET /health/ready says when it is)');
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    const ready = await fetch(`${origin}/health/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { status: string }).status).toBe('unavailable');
    proc.kill('SIGTERM');
    await once(proc, 'exit');
  }, 60_000);

  it('names the base URL to write when the upstream answers 404 to a URL without /v1', async () => {
    // A server that has no route but /v1/…: vLLM, SGLang and llama.cpp answer a missing route 404.
    const server = createHttpServer((req, res) => res.writeHead(req.url?.startsWith('/v1/') ? 200 : 404).end()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as { port: number };
      const { proc, printed } = await serve(['--upstream', `http://127.0.0.1:${port}`, '--plugins', '{"python":false}', '--log-level', 'silent']);
      await eventually(() => printed.some((line) => line.startsWith('try:')), 'the banner is printed');
      // It said only "answered HTTP 404 (check the upstream's base URL and API key)", naming no URL to write.
      expect(printed).toContain(
        `  not ready yet: upstream http://127.0.0.1:${port}/models answered HTTP 404 (check the upstream's base URL and API key); OpenAI-compatible servers (vLLM, SGLang, llama.cpp) answer under /v1: http://127.0.0.1:${port}/v1? (GET /health/ready says when it is)`,
      );
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    } finally {
      server.close();
    }
  }, 60_000);

  it('reports a mistake the user can fix in one line, exit status 2 for the command line and 1 for what failed after it, without a stack trace', async () => {
    const { proc, url } = await serve();
    const port = new URL(url).port;
    const cjsPlugin = path.join(configDir, 'commonjs-plugin.cjs');
    writeFileSync(cjsPlugin, `const { definePlugin } = require(${JSON.stringify(KIT)});\nmodule.exports = definePlugin({});\n`);
    const wrongType = path.join(configDir, 'wrong-type.json');
    writeFileSync(wrongType, JSON.stringify({ gateway: { port: '8080' } }));
    const exitingModule = path.join(configDir, 'exits-at-import.mjs');
    writeFileSync(exitingModule, 'process.exit(0);\nexport default {};\n');
    const acrossKeys = path.join(configDir, 'across-keys.json');
    writeFileSync(acrossKeys, JSON.stringify({ gateway: { maxQueuedRequests: 3 } }));
    const attempts = [
      // A name that is no shipped profile is a wrong command line; a profile file that is not there, a file the command could not use.
      { args: ['--sim-profile', 'no-such-profile'], message: "conveyor: option '--sim-profile <name>' argument 'no-such-profile' is invalid. not a shipped profile (", code: 2 },
      { args: ['--sim-profile', 'no-such-profile.json'], message: 'conveyor: timing profile "no-such-profile.json" not found' },
      { args: ['--port', port, '--sim-profile', 'fast-test'], message: `conveyor: cannot listen on 127.0.0.1:${port}: port ${port} is in use: another --port (config gateway.port), or 0 for any free one (listen EADDRINUSE` },
      { args: ['--host', '256.1.1.1', '--sim-profile', 'fast-test'], message: 'conveyor: cannot listen on 256.1.1.1:0: 256.1.1.1 is no address or name this machine resolves: another --host (config gateway.host)' },
      { args: ['--upstream', 'http://127.0.0.1:9/v1,not-a-url'], message: 'conveyor: option \'--upstream <url...>\': "not-a-url" is not a URL', code: 2 },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'], message: 'a replica is listed twice', code: 2 },
      // A space after the comma once made a second replica, " http://…", of the same one.
      { args: ['--upstream', 'http://127.0.0.1:9/v1, http://127.0.0.1:9/v1'], message: 'a replica is listed twice', code: 2 },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', 'no-such-plugin.ts'], message: 'conveyor: tool module no-such-plugin.ts: no such file' },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', NOT_A_PLUGIN], message: 'has no default export; export default definePlugin({...})' },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', LIMIT_TYPO_PLUGIN], message: `conveyor: tool module ${LIMIT_TYPO_PLUGIN}: plugin limit_typo: unknown key 'timeout' in limits (did you mean 'timeoutMs'?)\n` },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', cjsPlugin], message: `conveyor: tool module ${cjsPlugin}: it is a CommonJS module (plugins are ES modules: use .ts/.mjs/.js with import/export` },
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', WORD_COUNT_PLUGIN, '--tool', `${WORD_COUNT_PLUGIN}?again`], message: `a tool named word_count is already loaded, from ${WORD_COUNT_PLUGIN}\n` },
      { args: ['--config', 'no-such-config.json'], message: `conveyor: config file no-such-config.json: no such file ${path.resolve('no-such-config.json')} (a relative path is taken from the working directory, ${process.cwd()})\n` },
      // Once status 0 and not a word: a supervisor took it for a clean stop.
      { args: ['--upstream', 'http://127.0.0.1:9/v1', '--tool', exitingModule], message: `conveyor: tool module ${exitingModule}: its top-level code called process.exit(0) as the gateway imported it` },
      { args: ['--api-key', ''], message: "conveyor: option '--api-key <key...>' argument '' is invalid. expected a key, not an empty value", code: 2 },
      { args: ['--tool-read-path', '/srv/data'], message: 'conveyor: --tool-read-path applies to the modules given with --tool', code: 2 },
      { args: ['--plugins', '{"pyhton":false}'], message: 'conveyor: option \'--plugins <json>\' argument \'{"pyhton":false}\' is invalid. pyhton: unknown key (did you mean python?)', code: 2 },
      { args: ['--plugins', '{bad'], message: "conveyor: option '--plugins <json>' argument '{bad' is invalid. ", code: 2 },
      { args: ['--port', '8080xyz'], message: "conveyor: option '--port <port>' argument '8080xyz' is invalid", code: 2 },
      { args: ['--max-tool-rounds', '2.9'], message: 'expected a whole number from 1 to 64', code: 2 },
      // Once accepted here, then refused by the gateway's config under its key's name (maxToolRounds).
      { args: ['--max-tool-rounds', '100'], message: "option '--max-tool-rounds <n>' argument '100' is invalid. expected a whole number from 1 to 64\n", code: 2 },
      // Once read as 0 s: Number('') is 0.
      { args: ['--shutdown-grace', ''], message: "option '--shutdown-grace <seconds>' argument '' is invalid. expected seconds ≥ 0", code: 2 },
      // zod's report is one line here, the key's path included.
      { args: ['--config', wrongType], message: `conveyor: config file ${wrongType}: gateway.port: expected number, received string (got "8080")\n` },
      // A rule across keys, once told without the file or the key's whole path.
      { args: ['--config', acrossKeys], message: `conveyor: config file ${acrossKeys}: gateway.maxQueuedRequests: bounds the line of maxConcurrentRequests, which is not set` },
    ];
    for (const { args, message, code = 1 } of attempts as Array<{ args: string[]; message: string; code?: number }>) {
      const failed = await promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', ...args], { timeout: 30_000 }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code, args.join(' ')).toBe(code);
      expect(failed?.stderr).toContain(message);
      expect(failed?.stderr).toMatch(/^conveyor: [^\n]*\n$/);
      expect(failed?.stderr).not.toMatch(/^\s+at /m);
    }
    // serve is the default command: a mistyped command is not read as serve's argument.
    const mistyped = await promisify(execFile)(process.execPath, [CLI, 'serv', '--port', '0']).catch((err: { code: number; stderr: string }) => err);
    expect(mistyped).toMatchObject({ code: 2, stderr: "conveyor: unknown command 'serv' (commands: serve, parse; conveyor --help)\n" });
    proc.kill('SIGTERM');
    await once(proc, 'exit');
    // Some thirty CLI starts one after another: 50 s alone, 118 s with the CPU shared.
  }, 300_000);

  /** `conveyor serve` that must refuse to start: its exit status and stderr, checked to be one `conveyor: ` line with no stack. */
  async function refusedStart(args: string[]): Promise<string> {
    const failed = await promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', '--sim-profile', 'fast-test', ...args], { timeout: 30_000 }).then(
      () => null,
      (err: { code: number | string; stderr: string }) => err,
    );
    expect(failed?.code, args.join(' ')).toBe(1);
    expect(failed?.stderr, args.join(' ')).toMatch(/^conveyor: [^\n]*\n$/);
    expect(failed?.stderr).not.toMatch(/^\s+at /m);
    return failed!.stderr;
  }

  it("refuses a built-in's data file that is missing or not what it reads, at start-up in one line (was: a stack trace for the database, every search failing for the index)", async () => {
    expect(await refusedStart(['--plugins', '{"database":{"file":"/nonexistent.sqlite"}}'])).toBe('conveyor: plugins.database.file: no such file /nonexistent.sqlite\n');
    expect(await refusedStart(['--plugins', `{"database":{"file":${JSON.stringify(configDir)}}}`])).toBe(`conveyor: plugins.database.file: ${configDir} is not a file\n`);
    const notSqlite = path.join(configDir, 'not-sqlite.db');
    writeFileSync(notSqlite, 'just text\n'.repeat(100));
    expect(await refusedStart(['--plugins', `{"database":{"file":${JSON.stringify(notSqlite)}}}`])).toContain(`conveyor: plugins.database.file: ${notSqlite} is not a SQLite database`);
    // In a config file, relative to the file's folder, as every path there.
    const folder = path.join(configDir, 'data-files');
    mkdirSync(folder, { recursive: true });
    const missingIndex = path.join(folder, 'missing-index.json');
    writeFileSync(missingIndex, JSON.stringify({ plugins: { search: { index: 'no-such-index.sqlite' } } }));
    expect(await refusedStart(['--config', missingIndex])).toContain(`conveyor: plugins.search.index: no such file ${path.join(folder, 'no-such-index.sqlite')} (build one with \`npm run build:search-index`);
    // A SQLite file that is not a search index (the database tool's sample) would fail every search too.
    expect(await refusedStart(['--plugins', `{"search":{"index":${JSON.stringify(ensureSampleDatabase())}}}`])).toContain('is not a search index (no such table: docs)');
    // As root, the database plugin's sandbox runs as a uid of its own, which reads a 0600 file as nobody can.
    if (process.getuid?.() === 0) {
      const privateDb = path.join(configDir, 'private.sqlite');
      copyFileSync(ensureSampleDatabase(), privateDb);
      chmodSync(privateDb, 0o600);
      expect(await refusedStart(['--plugins', `{"database":{"file":${JSON.stringify(privateDb)}}}`])).toBe(
        `conveyor: plugins.database.file: ${privateDb} is not readable by other users, and the database plugin runs as an unprivileged uid of its own (chmod o+r it)\n`,
      );
    }
  }, 120_000);

  it("says where a config file's relative toolModules path was taken from: the file's folder, not the working directory", async () => {
    const folder = path.join(configDir, 'elsewhere');
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, 'conveyor.json');
    // README's sample entry: right in a conveyor.json in the checkout's root, not in a file kept elsewhere.
    writeFileSync(file, JSON.stringify({ toolModules: ['plugins/kit/examples/word-count-plugin.ts'] }));
    const stderr = await refusedStart(['--config', file]);
    expect(stderr).toContain(`conveyor: tool module ${path.join(folder, 'plugins/kit/examples/word-count-plugin.ts')}: no such file (toolModules paths in a config file are relative to the file's folder;`);
    expect(stderr).not.toContain('a relative path is taken from the working directory');
    // A relative --tool path is the working directory's, and says so.
    expect(await refusedStart(['--tool', 'no-such-plugin.ts'])).toBe(
      `conveyor: tool module no-such-plugin.ts: no such file ${path.resolve('no-such-plugin.ts')} (a relative path is taken from the working directory, ${process.cwd()})\n`,
    );
  }, 60_000);

  it("adds the install steps to 'Cannot find package zod' for a plugin module outside the checkout", async () => {
    const folder = path.join(configDir, 'no-zod-plugin');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
    const module = path.join(folder, 'no-zod.ts');
    writeFileSync(module, `import { z } from 'zod';\nimport { definePlugin } from ${JSON.stringify(KIT)};\nexport default definePlugin({ name: 'no_zod', description: 'x', parameters: z.object({}), consumes: 'call', hooks: { onEnd: () => 'ok' } });\n`);
    const stderr = await refusedStart(['--tool', module]);
    expect(stderr).toContain(`conveyor: tool module ${module}: Cannot find package 'zod' imported from ${module} (`);
    expect(stderr).toContain('a package.json with {"type": "module"} and `npm install zod@4` run there');
  }, 60_000);

  it('logs a promise an inline tool let go of that then rejects, and serves on (Node would end the process)', async () => {
    const { url, logLines } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--tool', STRAY_REJECTION_PLUGIN]);
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: 'What is 200*701?' }] }),
    });
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toContain('140200');
    await eventually(() => logLines.some((l) => (l as { msg?: string }).msg?.startsWith('unhandled promise rejection')), 'the rejection is logged');
    const line = logLines.find((l) => (l as { msg?: string }).msg?.startsWith('unhandled promise rejection')) as { level: number; err: { message: string } };
    expect(line).toMatchObject({ level: 50, err: { message: 'stray rejection from a hook' } });
    expect((await fetch(`${url.replace(/\/v1$/, '')}/health`)).status).toBe(200);
  }, 60_000);

  // Regression (review 8, finding 4): the model got the message, and nothing of it was logged.
  it("logs a hook's throw at warn, with the tool, the hook and the stack", async () => {
    const { url, logLines } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--tool', THROWING_PLUGIN]);
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: 'What is 200*701?' }] }),
    });
    expect(res.status).toBe(200);
    await eventually(() => logLines.some((l) => (l as { msg?: string }).msg === "calculator's onEnd threw"), 'the throw is logged');
    expect(logLines.find((l) => (l as { msg?: string }).msg === "calculator's onEnd threw")).toMatchObject({
      level: 40,
      plugin: 'calculator',
      hook: 'onEnd',
      runtime: 'inline',
      stack: expect.stringMatching(/^Error: deliberate failure\n\s+at .*throwing-calculator-plugin\.ts:\d+/),
    });
  }, 60_000);

  it('says in the banner and in a warn line which built-in a --tool module replaced, and from which module', async () => {
    const replacement = `${FAULTY_PLUGIN}?name=calculator`;
    const { proc, printed, logLines } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--tool', replacement, '--tool', WORD_COUNT_PLUGIN]);
    // pino writes through its own buffer: the warn line can come after the listening line.
    const warned = () => logLines.filter((l) => (l as { level?: number }).level === 40);
    await eventually(() => warned().length > 0, 'the warn line is written');
    expect(warned()).toEqual([expect.objectContaining({ tool: 'calculator', module: replacement, msg: `tool module ${replacement} replaces the built-in tool calculator` })]);
    await eventually(() => printed.some((l) => l.startsWith('tools: ')), 'the banner lists the tools');
    const tools = printed.find((l) => l.startsWith('tools: '))!;
    expect(tools).toContain(`calculator (from ${replacement}),`);
    // A module that adds a tool of a new name replaced nothing; a built-in left alone is plain.
    expect(tools).toMatch(/, word_count \(isolates: /);
    expect(tools).toMatch(/^tools: search, calculator \(from /);
    proc.kill('SIGTERM');
    await once(proc, 'exit');
  }, 60_000);
});
