import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Piece } from '../../parsers/parser-events.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { sampleDocsSource } from '../../plugins/search/build-search-index.ts';
import { extractPageText } from '../../plugins/search/html-page-text.ts';
import { buildSearchIndex } from '../../plugins/search/search-index-builder.ts';
import { MAX_HIT_TEXT_CHARS } from '../../plugins/search/http-search-backend.ts';
import { GatewayConfigError } from '../../core/errors.ts';
import { DEFAULT_SEARCH_INDEX_FILE, searchModuleOptions } from '../../plugins/search/search-options.ts';
import searchDefault, { createSearchPlugin } from '../../plugins/search/search-plugin.ts';
import { SqliteSearchIndex, toFtsQuery } from '../../plugins/search/sqlite-search-index.ts';
import { samplePagesWithEveryWord } from '../gateway/sample-pages-oracle.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-search-');
const indexFile = path.join(dir, 'sample.sqlite');

beforeAll(async () => {
  await buildSearchIndex({ out: indexFile, sources: [sampleDocsSource()] });
});

const queryPiece = (query: string): Piece => ({ kind: 'field', path: ['query'], value: query });

describe('extractPageText', () => {
  it('keeps the main content, split at sections, without scripts, styles, chrome or permalinks', () => {
    const page = extractPageText(`<html><head><title>os &mdash; Docs</title><style>p{}</style></head><body>
      <nav>Home | Index</nav>
      <div class="body" role="main">
        <section id="module-os"><h1>os<a class="headerlink" href="#module-os">¶</a></h1><p>Portable <em>OS</em>&nbsp;interfaces.</p>
          <script>var x = "not content";</script>
          <section id="files"><h2>Files</h2><ul><li>open</li><li>close</li></ul></section>
        </section>
      </div>
      <div class="footer">© footer outside main</div></body></html>`);
    expect(page.title).toBe('os — Docs');
    expect(page.h1).toBe('os');
    expect(page.sections).toEqual([
      { id: 'module-os', heading: 'os', text: 'os Portable OS interfaces.' },
      { id: 'files', heading: 'Files', text: 'Files open close' },
    ]);
  });

  it('uses the whole body minus nav/header/footer when the page marks no main content', () => {
    const page = extractPageText('<body><header>Site</header><h1>Hi</h1><p>a<br>b</p><footer>f</footer></body>');
    expect(page.sections).toEqual([{ id: undefined, heading: 'Hi', text: 'Hi a b' }]);
  });
});

describe('toFtsQuery', () => {
  it('quotes every word, so FTS5 syntax in the model text is just words', () => {
    expect(toFtsQuery('NEAR(a AND "b") OR c*')).toBe('"near" OR "a" OR "and" OR "b" OR "or" OR "c"');
    expect(toFtsQuery('Hello world in C++ and C#')).toBe('"hello" OR "world" OR "in" OR "c++" OR "and" OR "c#"');
    expect(toFtsQuery('?! ++ --')).toBeUndefined();
    expect(toFtsQuery('hello "world" C++', 'every')).toBe('"hello" AND "world" AND "c++"');
  });
});

describe('search index', () => {
  it('indexes the sample pages and ranks the page for the language asked for first (bm25, snippet)', () => {
    const index = new SqliteSearchIndex(indexFile);
    try {
      expect(index.meta()).toMatchObject({ pages: '20', documents: '20' });
      for (const [query, title] of [
        ['hello world in Python', 'Hello, World! in Python'],
        ['Hello World in C++', 'Hello, World! in C++'],
        ['hello world java', 'Hello, World! in Java'],
        ['println! macro cargo', 'Hello, World! in Rust'],
      ] as const) {
        expect(index.searchSync(query, 3)[0]?.title, query).toBe(title);
      }
      const [hit] = index.searchSync('hello world in Python', 1);
      expect(hit?.url).toBe('https://docs.example/hello-world/python.html');
      expect(hit?.snippet).toContain('**Python**');
      expect(hit?.snippet).not.toContain('window.gallery'); // scripts are not indexed
      expect(index.searchSync('copyright', 5)).toEqual([]); // the footer is chrome
    } finally {
      index.close();
    }
  });
});

describe('search index: every word first', () => {
  it('ranks sections with every word of the query above sections with the rarer words only', async () => {
    // A docs corpus where "Python" is on every page (so bm25 gives it almost no weight), with a
    // short "Hello World" section that does not say Python: OR alone ranked it and the other
    // languages' pages above Python's own.
    const docs = path.join(dir, 'python-docs');
    await mkdir(docs);
    await writeFile(path.join(docs, 'asyncio.html'), '<h1>Hello World with call_soon()</h1><p>An example using call_soon to print hello world.</p>');
    for (let i = 0; i < 40; i++) await writeFile(path.join(docs, `lib-${i}.html`), `<h1>Module ${i}</h1><p>Python library module ${i}, part of Python.</p>`);
    const file = path.join(dir, 'python-docs.sqlite');
    await buildSearchIndex({ out: file, sources: [sampleDocsSource(), { dir: docs }] });
    const index = new SqliteSearchIndex(file);
    try {
      const titles = index.searchSync('hello world Python', 5).map((h) => h.title);
      expect(titles[0]).toBe('Hello, World! in Python');
      // Then the sections with only some of the words, by bm25, to fill the limit.
      expect(titles).toHaveLength(5);
      expect(titles).toContain('Hello World with call_soon()');
      expect(new Set(titles).size).toBe(5);
      expect(index.searchSync('Module 7', 3).map((h) => h.title)[0]).toBe('Module 7');
    } finally {
      index.close();
    }
  });
});

describe('search index: counting matching pages', () => {
  it('counts the pages that contain every word over the whole index, whatever the result limit', () => {
    const index = new SqliteSearchIndex(indexFile);
    try {
      for (const words of [['hello', 'world', 'Python'], ['hello', 'world', 'Java'], ['hello', 'world'], ['JVM'], ['zzyzx']]) {
        const query = words.join(' ');
        expect(index.countSync(query), query).toBe(samplePagesWithEveryWord(words).length);
      }
      // Every page says hello world, more than a search returns: the count is not capped.
      expect(index.countSync('hello world')).toBeGreaterThan(5);
      expect(index.searchSync('hello world', 5)).toHaveLength(5);
      expect(index.countSync('?!')).toBe(0);
    } finally {
      index.close();
    }
  });
});

describe('search plugin (sqlite)', () => {
  it('reports the count of pages containing every word as data.value, and says it in the observation', async () => {
    const tool = inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 1 }));
    const pages = samplePagesWithEveryWord(['hello', 'world', 'Java']).length;
    const streamed = await runScriptedCall(tool, { pieces: [queryPiece('hello world Java')], args: { query: 'hello world Java' } });
    const whole = await runScriptedCall(tool, { args: { query: 'hello world Java' } });
    expect(streamed.result?.data).toMatchObject({ value: pages, early: true });
    expect(whole.result?.data).toMatchObject({ value: pages, early: false });
    expect((streamed.result?.data?.['hits'] as unknown[]).length).toBe(1);
    expect(streamed.result?.content.split('\n').at(-1)).toBe(`${pages} pages contain every word of "hello world Java".`);
    expect(whole.result?.content).toBe(streamed.result?.content);

    const one = await runScriptedCall(tool, { args: { query: 'hello world Python' } });
    expect(one.result?.data?.['value']).toBe(samplePagesWithEveryWord(['hello', 'world', 'Python']).length);
    expect(one.result?.content).toMatch(/\n1 page contains every word of "hello world Python"\.$/);
  });

  it('runs the query when the query field is decoded and returns the ranked hits at the end', async () => {
    const tool = inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 3 }));
    expect(tool.name).toBe('search');
    expect(tool.consumes).toBe('field');
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    const run = await runScriptedCall(tool, { pieces: [queryPiece('hello world in Java')], args: { query: 'hello world in Java' } });
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result?.ok).toBe(true);
    expect(run.result?.content.split('\n')[0]).toBe('1. Hello, World! in Java');
    expect(run.result?.content).toContain('https://docs.example/hello-world/java.html');
    expect(run.result?.data).toMatchObject({ early: true });
    expect((run.result?.data?.['hits'] as unknown[]).length).toBe(3);
  });

  it('searches at the end when no piece was streamed (a call delivered whole)', async () => {
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile })), { args: { query: 'hello world in C++' } });
    expect(run.result?.content.split('\n')[0]).toBe('1. Hello, World! in C++');
    expect(run.result?.data).toMatchObject({ early: false });
  });

  it('says there are no results rather than failing', async () => {
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile })), {
      pieces: [queryPiece('zzyzx quux')],
      args: { query: 'zzyzx quux' },
    });
    expect(run.result).toMatchObject({ ok: true, content: 'No results for "zzyzx quux".' });
  });

  it('reports a missing index as a tool error that says how to build it', async () => {
    const missing = path.join(dir, 'nope.sqlite');
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile: missing })), {
      pieces: [queryPiece('x')],
      args: { query: 'x' },
    });
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toContain(`no search index at ${missing}`);
    expect(run.result?.content).toContain('npm run build:search-index');
  });

  it('rejects an empty query through the schema', async () => {
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile })), { args: { query: '' } });
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/search got invalid arguments/);
  });
});

describe('search plugin (http backend)', () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => {};

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the query as soon as the field is decoded, before the call ends (SearXNG shape)', async () => {
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let received!: () => void;
    const requestSeen = new Promise<void>((resolve) => (received = resolve));
    handler = (req, res) => {
      order.push(`request ${req.url}`);
      received();
      void released.then(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ results: [{ title: 'Hello in Go', url: 'https://go.example/hello', content: 'fmt.Println  prints' }] }));
      });
    };
    const tool = inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/search?q={query}&n={limit}&format=json`, maxResults: 4 }));
    const execution = tool.start({ callId: 'call_1', signal: new AbortController().signal, emit: () => {} });
    await execution.piece(queryPiece('hello world in Go'));
    await requestSeen;
    order.push('call end');
    const ending = execution.end({ query: 'hello world in Go' });
    release();
    const result = await ending;
    expect(order).toEqual(['request /search?q=hello%20world%20in%20Go&n=4&format=json', 'call end']);
    expect(result).toMatchObject({ ok: true, content: '1. Hello in Go\n   https://go.example/hello\n   fmt.Println prints' });
    // A search API gives no count over its corpus: no data.value, so a plan's $n gets the text.
    expect(result.data).not.toHaveProperty('value');
  });

  it('maps the {items:[{title,link,snippet}]} shape too', async () => {
    handler = (_req, res) => res.end(JSON.stringify({ items: [{ title: 'T', link: 'https://t.example/', snippet: 's' }] }));
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/?q={query}` })), {
      pieces: [queryPiece('t')],
      args: { query: 't' },
    });
    expect(run.result).toMatchObject({ ok: true, content: '1. T\n   https://t.example/\n   s' });
  });

  it("reports the API's total count as data.value where it gives one (SearXNG, Google), early or not", async () => {
    handler = (req, res) =>
      res.end(
        req.url?.startsWith('/g')
          ? JSON.stringify({ items: [{ title: 'T', link: 'https://t.example/', snippet: 's' }], searchInformation: { totalResults: '17' } })
          : JSON.stringify({ results: [{ title: 'T', url: 'https://t.example/', content: 's' }], number_of_results: 3 }),
      );
    const searx = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/s?q={query}` })), { pieces: [queryPiece('t')], args: { query: 't' } });
    expect(searx.result?.data).toMatchObject({ value: 3, early: true });
    expect(searx.result?.content).toContain('3 pages contain every word');
    const google = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/g?q={query}` })), { args: { query: 't' } });
    expect(google.result?.data).toMatchObject({ value: 17, early: false });
  });

  it('takes a total of 0 beside a page of results (SearXNG\'s number_of_results: 0) for no count', async () => {
    handler = (_req, res) =>
      res.end(JSON.stringify({ results: [{ title: 'A', url: 'https://a.example/', content: 'a' }, { title: 'B', url: 'https://b.example/', content: 'b' }], number_of_results: 0 }));
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/s?q={query}`, maxResults: 1 })), { pieces: [queryPiece('t')], args: { query: 't' } });
    expect(run.result).toMatchObject({ ok: true, content: '1. A\n   https://a.example/\n   a', data: { early: true } });
    expect(run.result?.data).not.toHaveProperty('value');
  });

  // Review s39: an engine that puts a page's whole text in `content` made a 1 MB observation.
  it("cuts a hit's long snippet and title to MAX_HIT_TEXT_CHARS, and says when the answer is no JSON", async () => {
    handler = (_req, res) => res.end(JSON.stringify({ results: [{ title: 'T '.repeat(1000), url: 'https://t.example/', content: 'word '.repeat(200_000) }] }));
    const call = () => runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/?q={query}` })), { args: { query: 'q' } });
    const hit = ((await call()).result?.data?.['hits'] as Array<{ title: string; snippet: string }>)[0]!;
    for (const text of [hit.title, hit.snippet]) {
      expect(text.length).toBeLessThanOrEqual(MAX_HIT_TEXT_CHARS);
      expect(text).toMatch(/ (T|word)…$/);
    }
    handler = (_req, res) => res.end('<html>rate\n limited</html>');
    expect((await call()).result?.content).toBe('error: search failed: search API answer is not JSON: <html>rate limited</html>');
  });

  // The regression: a hit's url was passed on whole, so a 10 kB one went into the observation.
  it("cuts a hit's long url to MAX_HIT_TEXT_CHARS with an ellipsis, as its title and snippet", async () => {
    const long = `https://t.example/${'a'.repeat(10_000)}`;
    handler = (_req, res) => res.end(JSON.stringify({ results: [{ title: 'T', url: long, content: 's' }, { title: 'U', url: 'https://u.example/x', content: 'u' }] }));
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/?q={query}` })), { args: { query: 'q' } });
    const cut = `${long.slice(0, MAX_HIT_TEXT_CHARS - 1)}…`;
    expect((run.result?.data?.['hits'] as Array<{ url: string }>).map((hit) => hit.url)).toEqual([cut, 'https://u.example/x']);
    expect(run.result?.content).toBe(`1. T\n   ${cut}\n   s\n2. U\n   https://u.example/x\n   u`);
  });

  it('turns an HTTP error, a foreign JSON shape and a timeout into tool errors', async () => {
    const call = (options: { timeoutMs?: number } = {}) =>
      runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/?q={query}`, ...options })), { args: { query: 'q' } });
    handler = (_req, res) => {
      res.statusCode = 503;
      res.end('busy');
    };
    expect((await call()).result).toMatchObject({ ok: false, content: 'error: search failed: search API answered HTTP 503: busy' });
    // The regression: the error page was quoted as text.slice(0, 200), which cut an emoji in half
    // (a lone surrogate in the observation), said nothing of the cut, and kept the page's line breaks.
    handler = (_req, res) => {
      res.statusCode = 502;
      res.end(`<h1>bad\n gateway</h1>${'a'.repeat(178)}😀 tail`);
    };
    const quoted = `<h1>bad gateway</h1>${'a'.repeat(178)}…`;
    expect((await call()).result).toMatchObject({ ok: false, content: `error: search failed: search API answered HTTP 502: ${quoted}` });
    handler = (_req, res) => res.end('{"answer":42}');
    expect((await call()).result?.content).toMatch(/not a list of results/);
    handler = () => {}; // never answers
    const timedOut = await call({ timeoutMs: 100 });
    expect(timedOut.result?.ok).toBe(false);
    expect(timedOut.result?.content).toBe('error: search failed: search API did not answer within 100 ms');
  });

  it('says a query too long for the API\'s URL is too long, rather than a bare "HTTP 431: "', async () => {
    // Node's server answers a request line past its 16 KiB header limit with 431 and no body, before
    // the handler; a public API says 414 (URI Too Long). The model read "search API answered HTTP 431: ".
    handler = (_req, res) => res.end('[]');
    const query = 'hello world '.repeat(2000);
    const run = await runScriptedCall(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/?q={query}` })), { pieces: [queryPiece(query)], args: { query } });
    expect(run.result).toEqual({
      ok: false,
      content: 'error: search failed: search API answered HTTP 431 (the request is too long for it): the query is 24000 characters; search with a few words',
    });
  });
});

describe('search module defaults', () => {
  it('is a field-consuming thread plugin over the default index unless a search URL is configured', () => {
    expect(searchDefault).toMatchObject({ name: 'search', consumes: 'field' });
    const moduleUrl = 'file:///app/plugins/search/search-plugin.ts';
    expect(searchModuleOptions(moduleUrl, {})).toEqual({ backend: 'sqlite', indexFile: DEFAULT_SEARCH_INDEX_FILE });
    expect(searchModuleOptions(`${moduleUrl}?index=%2Fidx.sqlite&maxResults=3`, { CONVEYOR_SEARCH_MAX_RESULTS: '8' })).toEqual({ backend: 'sqlite', indexFile: '/idx.sqlite', maxResults: 3 });
    expect(searchModuleOptions(moduleUrl, { CONVEYOR_SEARCH_URL: 'https://s.example/?q={query}', CONVEYOR_SEARCH_MAX_RESULTS: '8' })).toEqual({
      backend: 'http',
      urlTemplate: 'https://s.example/?q={query}',
      maxResults: 8,
    });
    expect(createSearchPlugin({ backend: 'sqlite' }).runtime).toBe('thread');
    expect(searchModuleOptions(moduleUrl, { CONVEYOR_SEARCH_MAX_RESULTS: '' })).toEqual({ backend: 'sqlite', indexFile: DEFAULT_SEARCH_INDEX_FILE });
  });

  // The regression: an invalid value was taken as unset, so CONVEYOR_SEARCH_MAX_RESULTS=ten searched
  // for 5 without a word, and ?maxResults=1000 passed where --plugins stops at 50, as the database's
  // and http_get's settings were before moduleUrlSettings.
  it('refuses a maxResults that is set but not valid, naming where it came from', () => {
    const moduleUrl = 'file:///app/plugins/search/search-plugin.ts';
    const rule = 'a whole number from 1 to 50';
    expect(() => searchModuleOptions(moduleUrl, { CONVEYOR_SEARCH_MAX_RESULTS: 'ten' })).toThrow(new GatewayConfigError(`search: CONVEYOR_SEARCH_MAX_RESULTS must be ${rule}, got "ten"`));
    expect(() => searchModuleOptions(`${moduleUrl}?maxResults=0`, {})).toThrow(new GatewayConfigError(`search: ?maxResults= must be ${rule}, got "0"`));
    expect(() => searchModuleOptions(`${moduleUrl}?maxResults=1000`, {})).toThrow(new GatewayConfigError(`search: ?maxResults= must be ${rule}, got "1000"`));
    expect(() => searchModuleOptions(`${moduleUrl}?maxResults=2.5`, {})).toThrow(GatewayConfigError);
    expect(createSearchPlugin({ backend: 'http', urlTemplate: 'https://s.example/?q={query}' }).runtime).toBe('inline');
  });
});

describe('npm run build:search-index', () => {
  it('builds an index file from --sample with the same builder', async () => {
    const out = path.join(dir, 'cli.sqlite');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'plugins/search/build-search-index.ts', '--sample', '--out', out]);
    expect(stdout).toContain(`${out}: 20 sections from 20 pages`);
    const index = new SqliteSearchIndex(out);
    expect(index.searchSync('hello world in Python', 1)[0]?.title).toBe('Hello, World! in Python');
    index.close();
  });
});
