import { describe, expect, it } from 'vitest';
import { scriptedGateway } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();

// A web page may send a text/plain or multipart POST anywhere without the browser asking first
// (no preflight): forwarded, it would reach the upstream with the gateway's own upstream key.
describe('a forwarded endpoint and a web page on another origin', () => {
  it('refuses the page (403 origin_not_allowed) before the upstream hears of it; no Origin, its own or an allowed one is forwarded', async () => {
    const heard: string[] = [];
    const gw = await scripted.start(
      (req, res) => {
        heard.push(String(req.headers.origin ?? 'none'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      },
      {},
      { allowedOrigins: ['https://app.example'] },
    );
    const post = (origin?: string) =>
      fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'text/plain', ...(origin ? { origin } : {}) }, body: '{"prompt":"hi"}' });
    const foreign = await post('http://evil.example');
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('origin_not_allowed');
    expect(heard).toEqual([]);
    const own = new URL(gw.url).origin;
    for (const origin of [undefined, own, 'https://app.example']) expect((await post(origin)).status, String(origin)).toBe(200);
    expect(heard).toEqual(['none', own, 'https://app.example']);
  });
});
