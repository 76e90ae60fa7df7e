import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../plugins/sqlite-driver.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { SAMPLE_DATABASE_FILE } from '../../plugins/database/sample-database.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';
import { samplePagesWithEveryWord } from './sample-pages-oracle.ts';
import { buildSampleSearchIndex } from '../support/sample-search-index.ts';
import { withoutRequestPart } from '../support/call-ids.ts';

interface Message {
  role: string;
  content: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

/** The page the http_get workload fetches; the token proves the text came from this server. */
const PAGE_TOKEN = `conveyor-${process.pid}-${Date.now().toString(36)}`;
const PAGE = `<!doctype html><html><head><title>Loopback page</title></head><body><nav>menu</nav><main><h1>Greetings</h1><p>The secret word is ${PAGE_TOKEN}.</p></main></body></html>`;

/** http_get's URL is only known once the page server listens, so its scenarios are built here. */
function httpGetScenario(name: string, url: string): Scenario {
  return {
    name,
    rules: [
      { when: { explicit: true, lastRole: 'user' }, reply: `[TOOL_CALLS][{"name": "http_get", "arguments": {"url": ${JSON.stringify(url)}}}]` },
      { when: { explicit: true, lastRole: 'tool' }, reply: 'The page says:\n\n{{tool_output}}' },
    ],
  };
}

/** Sets `x` in one python block and reads it in the next (README: each block is a fresh interpreter). */
const PYTHON_STATE_SCENARIO: Scenario = {
  name: 'python-state',
  rules: [
    { when: { explicit: true, lastUser: 'two blocks', lastRole: 'user' }, reply: "```python\nx = 41\nprint('set', x)\n```\nthen\n```python\nprint(x + 1)\n```" },
    { when: { explicit: true, lastUser: 'next turn', lastRole: 'user' }, reply: '```python\nprint(x + 1)\n```' },
    { when: { explicit: true, lastRole: 'tool' }, reply: 'The tool said: {{tool_output}}' },
  ],
};

const SEARCH_PROMPT = 'Show me hello world programs in Python, C++ and Java.';
const ask = (scenario: string, content: string, extra: Record<string, unknown> = {}) => ({ model: SIM_MODEL, scenario, messages: [{ role: 'user', content }], ...extra });

describe('built-in plugins end to end: gateway + simulator + real tools', () => {
  let dir: string;
  let pageServer: Server;
  let origin: string;
  /** Requests the page server received, by path. */
  const requested = new Map<string, number>();
  /** Every built-in on its defaults (http_get refuses loopback), over the sample pages' FTS index. */
  let conveyor: ConveyorHandle;
  /** Only http_get, allowed onto the private network so it can reach the loopback page. */
  let privateNet: ConveyorHandle;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conveyor-builtins-e2e-'));
    pageServer = createServer((req, res) => {
      requested.set(req.url!, (requested.get(req.url!) ?? 0) + 1);
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(PAGE);
    });
    const [index] = await Promise.all([
      buildSampleSearchIndex(dir),
      new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve)),
    ]);
    origin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    const sim = { scenarios: [httpGetScenario('http-get-allowed', `${origin}/allowed.html`), httpGetScenario('http-get-refused', `${origin}/refused.html`), PYTHON_STATE_SCENARIO] };
    const warm = async (handle: ConveyorHandle) => {
      // A running gateway's thread workers have loaded the search plugin; a fresh pool's first
      // task waits for that (about a second under tsx), longer than the whole decode of a round.
      await postJson(handle.gateway.url, '/v1/chat/completions', ask('search-hello-world', SEARCH_PROMPT, { max_tool_rounds: 1 }));
      return handle;
    };
    [conveyor, privateNet] = await Promise.all([
      startTestConveyor({ sim, plugins: { search: { index, maxResults: 2 } } }).then(warm),
      startTestConveyor({
        sim,
        plugins: { http_get: { allowPrivateNetwork: true }, python: false, search: false, calculator: false, database: false, local_news: false, plan: false },
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.allSettled([conveyor?.close(), privateNet?.close()]);
    pageServer?.closeAllConnections();
    await new Promise((resolve) => pageServer?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function timeline(handle: ConveyorHandle, res: { headers: Headers }): Promise<TimelineEvent[]> {
    const got = await getJson(handle.gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    expect(got.status).toBe(200);
    return got.json.events as TimelineEvent[];
  }

  it('search: three parallel calls; the first search has its result while the last call is still being decoded', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('search-hello-world', SEARCH_PROMPT));
    expect(res.status).toBe(200);
    const [assistant, ...tools] = res.json.conveyor.messages as Message[];
    const calls = assistant!.tool_calls!;
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments).query])).toEqual([
      ['search', 'hello world Python'],
      ['search', 'hello world C++'],
      ['search', 'hello world Java'],
    ]);
    // Each query's own page ranks first (real FTS5 over the sample pages).
    expect(tools.map((t) => [t.tool_call_id, t.content.split('\n')[0]])).toEqual([
      [calls[0]!.id, '1. Hello, World! in Python'],
      [calls[1]!.id, '1. Hello, World! in C++'],
      [calls[2]!.id, '1. Hello, World! in Java'],
    ]);
    // The count over the whole index travelled back from the thread worker with the hits.
    const countLine = (query: string) => {
      const n = samplePagesWithEveryWord(query.split(' ')).length;
      return `\n${n} ${n === 1 ? 'page contains' : 'pages contain'} every word of "${query}".`;
    };
    expect(tools[0]!.content.endsWith(countLine('hello world Python'))).toBe(true);
    expect(tools[2]!.content.endsWith(countLine('hello world Java'))).toBe(true);
    // Round 2 quotes the last tool message (the sim's {{tool_output}}).
    const answer = res.json.choices[0].message.content as string;
    expect(answer).toContain('I found a hello-world page for each of Python, C++ and Java');
    expect(answer).toContain(tools[2]!.content.trimEnd().split('\n').at(-1)); // the Java search's count line

    const events = await timeline(conveyor, res);
    const at = (type: string, callId: string) => events.findIndex((e) => e.type === type && e.callId === callId && e.round === 1);
    expect(at('tool-start', calls[0]!.id)).toBeGreaterThanOrEqual(0);
    expect(at('tool-start', calls[0]!.id)).toBeLessThan(at('call-end', calls[1]!.id));
    expect(at('tool-end', calls[0]!.id)).toBeLessThan(at('call-end', calls[2]!.id));
    expect(at('call-end', calls[2]!.id)).toBeLessThan(events.findIndex((e) => e.type === 'decode-end' && e.round === 1));
  });

  // Independent workloads share the engine's batch, as concurrent clients would.
  it('python: no state carries over from one block to the next, in one answer or in the next turn (README "Python keeps no state")', async () => {
    const first = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('python-state', 'two blocks'));
    expect(first.status).toBe(200);
    const turn = first.json.conveyor.messages as Message[];
    const [assistant, set, read] = turn;
    expect(assistant!.tool_calls!.map((c) => c.function.name)).toEqual(['python', 'python']);
    expect(set!.content).toBe('set 41\n');
    expect(read!.content).toMatch(/NameError: name 'x' is not defined\n$/);

    const next = await postJson(conveyor.gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'python-state',
      messages: [{ role: 'user', content: 'two blocks' }, ...turn, { role: 'user', content: 'next turn' }],
    });
    expect(next.status).toBe(200);
    const [, again] = next.json.conveyor.messages as Message[];
    expect(again!.content).toMatch(/NameError: name 'x' is not defined\n$/);
  });

  describe.concurrent('one request each', () => {
    it('database: every row of employees reaches the answer', async ({ expect }) => {
      const db = openSqlite(SAMPLE_DATABASE_FILE, { readonly: true });
      const names = db.prepare<[], { name: string }>('SELECT name FROM employees').all().map((r) => r.name);
      db.close();
      expect(names.length).toBeGreaterThan(0);

      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('database', 'Show me all employees.'));
      expect(res.status).toBe(200);
      const [assistant, tool] = res.json.conveyor.messages as Message[];
      expect(JSON.parse(assistant!.tool_calls![0]!.function.arguments)).toEqual({ query: 'SELECT * FROM employees' });
      expect(tool!.content).not.toMatch(/^error/);
      const answer = res.json.choices[0].message.content as string;
      expect(answer).toContain('Here are all the rows of the employees table:');
      for (const name of names) expect(answer).toContain(name);
    });

    it('database: a DELETE is rejected at the query field and nothing is deleted', async ({ expect }) => {
      const count = () => {
        const db = openSqlite(SAMPLE_DATABASE_FILE, { readonly: true });
        const n = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM employees').get()!.n;
        db.close();
        return n;
      };
      const before = count();
      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('database', 'Delete all the employees.'));
      expect(res.status).toBe(200);
      const [assistant, tool] = res.json.conveyor.messages as Message[];
      const callId = assistant!.tool_calls![0]!.id;
      expect(tool!.content).toMatch(/^error: database rejected the call: /);
      expect(res.json.choices[0].message.content).toContain('I cannot change the database');
      expect(res.json.choices[0].message.content).toContain(tool!.content);

      // The verdict came from the query field (the only piece). Whether it also cut the decode
      // short depends on the sandboxed process answering within the call's last 3 tokens, so
      // that is left to the validation workload, whose rejected call goes on for much longer.
      const events = await timeline(conveyor, res);
      const pieces = events.filter((e) => e.type === 'piece' && e.callId === callId).map((e) => e.detail);
      const piece = events.findIndex((e) => e.type === 'piece' && e.callId === callId && e.detail === 'field query');
      const rejected = events.findIndex((e) => e.type === 'abort' && e.callId === callId && e.detail?.startsWith('rejected: '));
      expect(pieces).toEqual(['field query']);
      expect(rejected).toBeGreaterThan(piece);
      expect(events[rejected]!.detail).toBe(`rejected: ${tool!.content.replace(/^error: database rejected the call: /, '')}`);
      expect(count()).toBe(before);
    });

    it('calculator: 200*701', async ({ expect }) => {
      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('calculator', 'What is 200*701?'));
      expect(res.status).toBe(200);
      const [assistant, tool] = res.json.conveyor.messages as Message[];
      expect(JSON.parse(assistant!.tool_calls![0]!.function.arguments)).toEqual({ expression: '200*701' });
      expect(tool!.content).toBe(String(200 * 701));
      expect(res.json.choices[0].message.content).toContain(String(200 * 701));

      // Streamed, the same turns and then the answer's arrive once, in a response.messages event before the finish chunk.
      const streamed = await streamChat(conveyor.gateway.url, ask('calculator', 'What is 200*701?'));
      const at = streamed.chunks.findIndex((c) => c.conveyor?.type === 'response.messages');
      expect(streamed.events.filter((e) => e.type === 'response.messages')).toHaveLength(1);
      expect(withoutRequestPart(streamed.chunks[at]!.conveyor!.messages)).toEqual(withoutRequestPart([...res.json.conveyor.messages, { role: 'assistant', content: res.json.choices[0].message.content }]));
      expect(streamed.chunks.slice(at + 1).find((c) => c.choices.length > 0)?.choices[0]!.finish_reason).toBe('stop');
      expect(streamed.content).toBe(res.json.choices[0].message.content);
    });

    it('http_get: fetches the loopback page when the private network is allowed; its text reaches round 2', async ({ expect }) => {
      const res = await postJson(privateNet.gateway.url, '/v1/chat/completions', ask('http-get-allowed', 'Fetch the page.'));
      expect(res.status).toBe(200);
      const [assistant, tool] = res.json.conveyor.messages as Message[];
      expect(JSON.parse(assistant!.tool_calls![0]!.function.arguments)).toEqual({ url: `${origin}/allowed.html` });
      expect(tool!.content).toMatch(/^HTTP 200 text\/html/);
      expect(requested.get('/allowed.html')).toBe(1);
      const answer = res.json.choices[0].message.content as string;
      expect(answer).toContain(`The secret word is ${PAGE_TOKEN}.`);
      expect(answer).not.toContain('menu'); // HTML reduced to its main text
    });

    it('http_get: with the default configuration a loopback URL is refused and never requested', async ({ expect }) => {
      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('http-get-refused', 'Fetch the page.'));
      expect(res.status).toBe(200);
      const tool = (res.json.conveyor.messages as Message[]).find((m) => m.role === 'tool')!;
      expect(tool.content).toMatch(/^error: .*127\.0\.0\.1 is a private network address/);
      expect(res.json.choices[0].message.content).toContain(tool.content);
      expect(requested.get('/refused.html')).toBeUndefined();
    });
  });
});
