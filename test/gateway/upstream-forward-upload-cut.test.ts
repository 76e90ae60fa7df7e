import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { chunkedUpload } from '../support/chunked-upload.ts';

type Line = Record<string, unknown>;

const scripted = scriptedGateway();

// A forwarded upload is undici's request body: once undici has done with it, Node's stream clean-up
// sets `req.socket` to null (nodejs/node#41011). The access log read `res.req.socket` when the
// response closed, to tell a client that left from an answer the gateway cut: a forwarded stream
// whose upstream then failed threw a TypeError there, which nothing caught (the gateway's process).
describe('a forwarded upload whose upstream fails after its status line', () => {
  it('is logged as cut short, and the gateway goes on answering', async () => {
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text) as Line) });
    const gw = await scripted.start(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"part": 1}\n\n');
        setTimeout(() => res.socket?.destroy(), 50);
      },
      { logger },
    );
    const upload = chunkedUpload(['{"file": ', '"a"}']);
    const res = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: upload, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(200);
    // The answer breaks off where the upstream failed.
    await expect(res.text()).rejects.toThrow();
    await expect.poll(() => lines.find((l) => l.path === '/v1/audio/transcriptions')).toMatchObject({ status: 200, cut_short: true });
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });
});
