import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Piece } from '../../parsers/parser-events.ts';
import { isPrivateAddress } from '../../plugins/http-get/guarded-connector.ts';
import httpGetDefault, { createHttpGetPlugin } from '../../plugins/http-get/http-get-plugin.ts';
import type { HttpGetOptions } from '../../plugins/http-get/http-get-options.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';

let server: Server;
let base: string;
let handler: (req: IncomingMessage, res: ServerResponse) => void;
const events: string[] = [];
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((req, res) => {
    events.push(`request ${req.method} ${req.url}`);
    handler(req, res);
  });
  server.on('connection', (socket) => {
    events.push('connection');
    sockets.add(socket);
    socket.on('close', () => events.push('socket closed'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  events.length = 0;
  for (const socket of sockets) socket.destroy();
  sockets.clear();
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const urlPiece = (url: string): Piece => ({ kind: 'field', path: ['url'], value: url });
const local = (options: HttpGetOptions = {}) => inlineTool(createHttpGetPlugin({ allowPrivateNetwork: true, ...options }));
const get = (url: string, options: HttpGetOptions = {}) => runScriptedCall(local(options), { pieces: [urlPiece(url)], args: { url } });
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('http_get plugin', () => {
  it('is a side-effecting, field-consuming inline tool', () => {
    expect(httpGetDefault).toMatchObject({ name: 'http_get', consumes: 'field', sideEffects: true });
    expect(httpGetDefault.runtime ?? 'inline').toBe('inline'); // the kit's default runtime
  });

  it('connects when the url is decoded but sends the GET only when the call ends, on that connection', async () => {
    handler = (_req, res) => res.end('pong');
    const execution = local().start({ callId: 'call_1', signal: new AbortController().signal, emit: () => {} });
    expect(await execution.piece(urlPiece(`${base}/ping?x=1`))).toBeUndefined();
    await until(() => events.includes('connection'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual(['connection']); // connected, nothing sent
    const result = await execution.end({ url: `${base}/ping?x=1` });
    expect(events.slice(0, 2)).toEqual(['connection', 'request GET /ping?x=1']); // no second connection
    expect(result).toMatchObject({ ok: true, content: `HTTP 200 (no content type) from ${base}/ping?x=1\npong`, data: { status: 200, bytes: 4, truncated: false } });
  });

  it('rejects a URL it will never fetch at the url field', async () => {
    for (const [url, reason] of [
      ['file:///etc/passwd', 'only http:// and https:// URLs can be fetched, not file:'],
      ['ftp://example.org/x', 'only http:// and https:// URLs can be fetched, not ftp:'],
      // Written without a scheme, as models often do: say so, with the URL to write instead. The
      // regression: "www.example.org:8080/x" parsed as scheme "www.example.org:", and the model read
      // "only http:// and https:// URLs can be fetched, not www.example.org:".
      ['example.org/page', 'not a valid absolute URL: "example.org/page" has no scheme; write "https://example.org/page"'],
      ['www.example.org:8080/x', 'not a valid absolute URL: "www.example.org:8080/x" has no scheme; write "https://www.example.org:8080/x"'],
      ['localhost:3000/api', 'not a valid absolute URL: "localhost:3000/api" has no scheme; write "https://localhost:3000/api"'],
      ['http//example.org', 'not a valid absolute URL: "http//example.org"'],
      ['//example.org/x', 'not a valid absolute URL: "//example.org/x" has no scheme; write "https://example.org/x"'],
      ['javascript:alert(1)', 'only http:// and https:// URLs can be fetched, not javascript:'],
      ['http://user:pw@example.org/', 'URLs with credentials are not fetched'],
      // Ports the Fetch standard blocks: HTTP spoken to a mail server, an SSH or IRC daemon.
      ['http://example.org:25/', "port 25 is not fetched: it is another protocol's (mail, SSH, IRC…), which browsers refuse too"],
      ['https://example.org:6667/x', "port 6667 is not fetched: it is another protocol's (mail, SSH, IRC…), which browsers refuse too"],
    ]) {
      expect((await get(url!)).rejected, url).toBe(reason);
    }
    expect(events).toEqual([]);
  });

  it('closes the early connection without sending anything when the call is aborted', async () => {
    const controller = new AbortController();
    const execution = local().start({ callId: 'call_1', signal: controller.signal, emit: () => {} });
    await execution.piece(urlPiece(`${base}/never`));
    await until(() => events.includes('connection'));
    controller.abort();
    await until(() => events.includes('socket closed'));
    expect(events).toEqual(['connection', 'socket closed']);
  });

  it('reduces HTML to text and decodes the declared charset', async () => {
    handler = (_req, res) => {
      res.setHeader('content-type', 'text/html; charset=iso-8859-1');
      res.end(Buffer.from('<html><head><title>Caf\xe9</title><script>x()</script></head><body><p>cr\xe8me &amp; br\xfbl\xe9e</p></body></html>', 'latin1'));
    };
    const run = await get(`${base}/page`);
    expect(run.result?.content).toBe(`HTTP 200 text/html; charset=iso-8859-1 from ${base}/page\nCafé\ncrème & brûlée`);
  });

  it('cuts the body at maxBytes and says so', async () => {
    handler = (_req, res) => res.end('x'.repeat(100_000));
    const run = await get(`${base}/big`, { maxBytes: 1000 });
    expect(run.result).toMatchObject({ ok: true, data: { bytes: 1000, truncated: true } });
    expect(run.result?.content.endsWith(`${'x'.repeat(1000)}\n[cut at 1000 bytes]`)).toBe(true);
  });

  it('follows redirects, but not to other schemes and not forever', async () => {
    handler = (req, res) => {
      const to: Record<string, string> = { '/a': '/b', '/b': '/final', '/loop': '/loop', '/evil': 'file:///etc/passwd' };
      if (req.url && to[req.url]) {
        res.writeHead(302, { location: to[req.url] });
        res.end();
      } else res.end(`at ${req.url}`);
    };
    expect((await get(`${base}/a`)).result).toMatchObject({ ok: true, content: `HTTP 200 (no content type) from ${base}/final\nat /final` });
    expect((await get(`${base}/loop`, { maxRedirects: 2 })).result?.content).toBe(`error: GET ${base}/loop failed: more than 2 redirects`);
    expect((await get(`${base}/evil`)).result?.content).toMatch(/redirected to a URL that is not fetched: only http/);
    handler = (_req, res) => void res.writeHead(302, { location: 'http://127.0.0.1:22/' }).end();
    expect((await get(`${base}/to-ssh`)).result?.content).toMatch(/redirected to a URL that is not fetched: port 22 is not fetched/);
  });

  it('turns a server that never answers into a tool error at the time limit', async () => {
    handler = () => {};
    const run = await get(`${base}/slow`, { timeoutMs: 150 });
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(new RegExp(`^error: GET ${base}/slow failed: `));
  });

  it('refuses loopback and private addresses by default, by IP and by name, without connecting', async () => {
    const port = (server.address() as AddressInfo).port;
    // An IP literal is refused as its field closes (the decode is cut short there), a name once it resolves.
    for (const url of [`${base}/`, `http://[::1]:${port}/`]) {
      const run = await runScriptedCall(inlineTool(createHttpGetPlugin()), { pieces: [urlPiece(url)], args: { url } });
      expect(run.rejected, url).toMatch(/^(127\.0\.0\.1|::1) is a private network address; http_get only fetches public hosts$/);
      expect(run.result, url).toBeUndefined();
    }
    const byName = `http://localhost:${port}/`;
    const run = await runScriptedCall(inlineTool(createHttpGetPlugin()), { pieces: [urlPiece(byName)], args: { url: byName } });
    expect(run.rejected).toBeUndefined();
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/localhost is a private network address \((127\.0\.0\.1|::1)\)/);
    expect(events).toEqual([]);
    expect(['10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '::ffff:127.0.0.1', 'fd00::1'].every(isPrivateAddress)).toBe(true);
    // IPv4 carried in IPv6 forms a router turns back into IPv4: NAT64, 6to4, IPv4-compatible, local NAT64.
    const embedded = ['64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b::169.254.169.254', '2002:7f00:1::', '2002:c0a8:101::1', '::127.0.0.1', '::a00:1', '64:ff9b:1::8.8.8.8'];
    expect(embedded.filter((a) => !isPrivateAddress(a))).toEqual([]);
    // SIIT, Teredo, discard, old site-local, and the documentation and 6to4-relay ranges (review 6).
    const others = ['::ffff:0:7f00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '100::1', 'fec0::1', '2001:db8::1', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1'];
    expect(others.filter((a) => !isPrivateAddress(a))).toEqual([]);
    // The second IPv6 documentation range, 3fff::/20 (RFC 9637): the README's "documentation" covered it, the code only 2001:db8::/32.
    expect(['3fff::1', '3fff:fff:ffff::1'].filter((a) => !isPrivateAddress(a))).toEqual([]);
    expect(isPrivateAddress('3fff:1000::1')).toBe(false);
    expect(['93.184.215.14', '2606:4700::1111', '64:ff9b::5db8:d70e', '2002:5db8:d70e::1'].some(isPrivateAddress)).toBe(false);
  });
});
