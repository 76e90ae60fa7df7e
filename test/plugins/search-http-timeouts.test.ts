import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { HttpSearchBackend, SearchTimeoutError } from '../../plugins/search/http-search-backend.ts';
import { createSearchPlugin } from '../../plugins/search/search-plugin.ts';

// Review s40: a search API that never answered read "search failed: The operation was aborted
// due to timeout", which does not say who was slow nor for how long.

let server: Server;
let base: string;

/** `/never` sends nothing; `/stall` sends its headers and the start of a body, then nothing. */
function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.url?.startsWith('/stall')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"results":[');
  }
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const failure = (promise: Promise<unknown>) => promise.then(() => expect.fail('the search answered'), (err: unknown) => err as Error);

describe('http search backend: an API that does not answer in time', () => {
  it('says the API did not answer within timeoutMs, with no headers and with headers then a stalled body', async () => {
    for (const path of ['/never', '/stall']) {
      const backend = new HttpSearchBackend({ urlTemplate: `${base}${path}?q={query}`, timeoutMs: 150 });
      const err = await failure(backend.answer('q', 5, new AbortController().signal));
      expect(err, path).toBeInstanceOf(SearchTimeoutError);
      expect(err.message).toBe('search API did not answer within 150 ms');
    }
  });

  it("reads undici's own headers and body timeouts the same way", async () => {
    // A dispatcher whose limits are tighter than the backend's deadline, so undici's timers fire
    // first (with equal limits the deadline, started before the request, always wins).
    const agent = new Agent();
    const tight = agent.compose((dispatch: Dispatcher['dispatch']) => (opts, handler) => dispatch({ ...opts, headersTimeout: 50, bodyTimeout: 50 }, handler));
    try {
      // Side by side: undici runs these timers on its coarse clock (ticks of about 0.5 s).
      const cases = [['/never', 'UND_ERR_HEADERS_TIMEOUT'], ['/stall', 'UND_ERR_BODY_TIMEOUT']] as const;
      const errors = await Promise.all(
        cases.map(([path]) => failure(new HttpSearchBackend({ urlTemplate: `${base}${path}?q={query}`, timeoutMs: 5_000, dispatcher: tight }).answer('q', 5, new AbortController().signal))),
      );
      cases.forEach(([path, code], i) => {
        expect(errors[i], path).toBeInstanceOf(SearchTimeoutError);
        expect(errors[i]!.message).toBe('search API did not answer within 5000 ms');
        expect((errors[i]!.cause as { code?: string }).code).toBe(code);
      });
    } finally {
      await agent.close().catch(() => agent.destroy());
    }
  });

  it("leaves an abort of the caller's own signal an abort, before the headers and during the body", async () => {
    for (const path of ['/never', '/stall']) {
      const backend = new HttpSearchBackend({ urlTemplate: `${base}${path}?q={query}`, timeoutMs: 5_000 });
      const caller = new AbortController();
      setTimeout(() => caller.abort(), 100);
      const err = await failure(backend.answer('q', 5, caller.signal));
      expect(err, path).not.toBeInstanceOf(SearchTimeoutError);
      expect(err.name).toBe('AbortError');
    }
  });

  it('gives the model that sentence as the tool error', async () => {
    const tool = inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: `${base}/never?q={query}`, timeoutMs: 100 }));
    const run = await runScriptedCall(tool, { args: { query: 'q' } });
    expect(run.result).toEqual({ ok: false, content: 'error: search failed: search API did not answer within 100 ms' });
  });
});
