import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSearchApiServer, type SearchApiServer } from '../../bench/tool-profiles/search-api-server.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson } from '../support/sse-client.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSampleSearchIndex } from '../support/sample-search-index.ts';

const request = (partial: boolean) => ({
  model: SIM_MODEL,
  scenario: 'search-hello-world',
  partial_execution: partial,
  messages: [{ role: 'user', content: 'Find hello world programs in Python, C++ and Java.' }],
});

describe('search over an HTTP search API, through the gateway', () => {
  let dir: string;
  let api: SearchApiServer;
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conveyor-search-http-'));
    const index = await buildSampleSearchIndex(dir);
    api = await startSearchApiServer({ indexFile: index, latencyMs: 50, concurrency: 1 });
    conveyor = await startTestConveyor({ plugins: { search: { url: api.urlTemplate } } });
  });
  afterAll(async () => {
    await conveyor?.close();
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  // Regression: the HTTP search ran in the thread pool, where an early search started by one
  // worker's onPiece was invisible to another worker's onEnd, so calls searched twice.
  it.each([true, false])('sends each query to the API exactly once (partial execution %s), and reports its count', async (partial) => {
    const before = api.served();
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', request(partial));
    expect(res.status).toBe(200);
    expect(api.served() - before).toBe(3);
    const tools = (res.json.conveyor.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(3);
    expect(tools[2]!.content).toMatch(/\d+ pages? contains? every word of "hello world Java"\./);
  });
});
