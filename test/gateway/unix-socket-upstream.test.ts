import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { getJson, streamChat } from '../support/sse-client.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

// A model server on the gateway's own machine, reached over a Unix domain socket (vLLM's --uds).
describe('an upstream on a Unix domain socket', () => {
  const dir = suiteTempDir('conveyor-uds-');
  const socket = path.join(dir, 'vllm.sock');
  let sim: SimHandle;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    // What a killed server leaves behind: its socket file, which the simulator replaces.
    const stale = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`]);
    await new Promise((resolve) => stale.stdout.once('data', resolve));
    stale.kill('SIGKILL');
    await new Promise((resolve) => stale.once('exit', resolve));
    expect(existsSync(socket)).toBe(true);
    sim = await startSim({ profile: E2E_PROFILE, uds: socket });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  it('is named unix:PATH:/v1 by the simulator and serves chat streams and the model list through the gateway', async () => {
    expect(sim.url).toBe(`unix:${socket}:/v1`);
    const chat = await streamChat(gateway.url, { model: SIM_MODEL, stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'hello over a socket' }] });
    expect(chat.status).toBe(200);
    expect(chat.done).toBe(true);
    expect(chat.content.length).toBeGreaterThan(0);
    expect(chat.chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
    const models = await getJson(gateway.url, '/v1/models');
    expect(models.status).toBe(200);
    expect((models.json as { data: Array<{ id: string }> }).data.map((m) => m.id)).toContain(SIM_MODEL);
  });
});
