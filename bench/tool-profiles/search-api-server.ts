import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSearchIndex } from '../../plugins/search/sqlite-search-index.ts';

export interface SearchApiServerOptions {
  /** The FTS5 index the API answers from. */
  indexFile: string;
  /** Time from request to response, as a web search API takes (network + ranking). */
  latencyMs: number;
  /** Requests served at once; the rest wait their turn (a rate-limited API key). 0 = unlimited. */
  concurrency: number;
}

export interface SearchApiServer {
  /** URL template for the search plugin's HTTP backend (`{query}`, `{limit}`). */
  urlTemplate: string;
  served(): number;
  close(): Promise<void>;
}

/**
 * A local stand-in for a remote web search API (SearXNG's JSON shape, `number_of_results`
 * included), answering from the FTS index after a configured latency. The search plugin reaches
 * it through its real HTTP backend, so the benchmark measures the product's path; only the
 * distance to the search engine is emulated.
 */
export async function startSearchApiServer(options: SearchApiServerOptions): Promise<SearchApiServer> {
  const index = openSearchIndex(options.indexFile);
  let busy = 0;
  let served = 0;
  const waiting: Array<() => void> = [];
  const acquire = async (): Promise<void> => {
    if (options.concurrency === 0 || busy < options.concurrency) {
      busy++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/search') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const query = url.searchParams.get('q') ?? '';
    const limit = Math.min(Number(url.searchParams.get('limit')) || 5, 50);
    void (async () => {
      await acquire();
      try {
        await sleep(options.latencyMs);
        const results = index.searchSync(query, limit).map((hit) => ({ title: hit.title, url: hit.url, content: hit.snippet }));
        served++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ query, number_of_results: index.countSync(query), results }));
      } finally {
        release();
      }
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlTemplate: `http://127.0.0.1:${port}/search?q={query}&limit={limit}&format=json`,
    served: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
