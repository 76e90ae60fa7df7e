import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

const script = `
import { runWorkloads } from './bench/run-workloads.ts';
import { TOOL_PROFILES } from './bench/tool-profiles/tool-profiles.ts';
import { calculator } from './bench/workloads/paper-workloads.ts';
const [url, simulator] = process.argv.slice(1);
const { failures } = await runWorkloads({ workloads: [calculator], upstreamUrl: url, simulator: simulator === 'true', model: 'mistral-7b-instruct-sim', toolProfile: TOOL_PROFILES.local, runs: 1, warmup: 0, sequentialPairs: false, serialWorkloads: false, coldImports: false });
if (failures.length) throw new Error(JSON.stringify(failures));
`;

// The sim behind a proxy that keeps every chat body it passes on: what a real server would get.
let sim: SimHandle;
let proxy: http.Server;
let proxyUrl: string;
const chatBodies: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test' });
  proxy = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (req.url?.endsWith('/chat/completions')) chatBodies.push(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
    const upstream = await fetch(new URL(req.url ?? '/', sim.url.replace(/\/v1$/, '')), {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    if (upstream.body) Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream).pipe(res);
    else res.end();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await sim?.close();
});

// `scenario` is the simulator's own field: sent to a real server (bench --upstream), vLLM logs it
// as ignored and a strict OpenAI-compatible server refuses the request.
describe('the workloads’ requests', () => {
  it('name the sim scenario only when the upstream is the simulator', async () => {
    await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, proxyUrl, 'false'], { cwd: root, timeout: 90_000 });
    const real = chatBodies.splice(0);
    expect(real.length).toBeGreaterThanOrEqual(4); // one pair, two rounds each
    for (const body of real) expect(body).not.toHaveProperty('scenario');
    expect(real[0]!.messages).toEqual([{ role: 'user', content: 'What is 200*701?' }]);

    await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, proxyUrl, 'true'], { cwd: root, timeout: 90_000 });
    const simulated = chatBodies.splice(0);
    expect(simulated.length).toBeGreaterThanOrEqual(4);
    for (const body of simulated) expect(body).toHaveProperty('scenario', 'calculator');
  }, 200_000);
});
