import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';

// A JSON file saved with a byte order mark (Windows Notepad before 2019, PowerShell 5's
// `Out-File -Encoding utf8`) and sent with `curl --data-binary @body.json`: vLLM's FastAPI reads
// it (Python's json.loads takes bytes with a UTF-8 BOM), so the gateway in front of it must too.
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe('regression: a JSON body that starts with a UTF-8 byte order mark', () => {
  let sim: SimHandle;
  let chat: GatewayHandle;
  let echo: Server;
  let named: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: { ...E2E_PROFILE, decode: { baseMs: 2, perSeqMs: 0 } } });
    chat = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
    echo = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    named = await startGateway({ port: 0, upstream: { baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`, model: 'served-name' } }, { tools: new Map() });
  });
  afterAll(async () => {
    await Promise.all([chat?.close(), named?.close()]);
    await sim?.close();
    await new Promise((resolve) => echo?.close(resolve));
  });

  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat([BOM, Buffer.from(JSON.stringify(body))]) });

  it('is read as the JSON after the mark on the chat route, not refused as "not valid JSON"', async () => {
    const res = await post(`${chat.url}/v1/chat/completions`, { model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
  });

  it('is read on a forwarded route whose model the gateway names (upstream.model)', async () => {
    const res = await post(`${named.url}/v1/embeddings`, { model: 'client-name', input: 'hello' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ model: 'served-name', input: 'hello' });
  });
});
