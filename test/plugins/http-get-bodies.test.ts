import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, createGzip, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { builtinPluginsConfigSchema } from '../../plugins/builtin-plugins-config.ts';
import { guardedConnector } from '../../plugins/http-get/guarded-connector.ts';
import { looksBinary } from '../../plugins/http-get/http-get-observation.ts';
import { createHttpGetPlugin } from '../../plugins/http-get/http-get-plugin.ts';
import type { HttpGetOptions } from '../../plugins/http-get/http-get-options.ts';
import { limitedGet } from '../../plugins/http-get/limited-get.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';

let server: Server;
let base: string;
let handler: (req: IncomingMessage, res: ServerResponse) => void;
const open = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const res of open) res.destroy();
  server.closeAllConnections();
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, options: HttpGetOptions = {}) => {
  const url = `${base}${path}`;
  return runScriptedCall(inlineTool(createHttpGetPlugin({ allowPrivateNetwork: true, ...options })), { pieces: [{ kind: 'field', path: ['url'], value: url }], args: { url } });
};
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0xfe, 0xff]);

describe('http_get: bodies that are not plain text', () => {
  it('describes a binary body without a content type instead of decoding it as text', async () => {
    // The regression: `type === ''` counted as text, so the model got NULs and U+FFFD.
    handler = (_req, res) => {
      res.removeHeader('content-type');
      res.end(PNG_HEAD);
    };
    const run = await get('/notype');
    expect(run.result).toMatchObject({ ok: true, content: `HTTP 200 (no content type) from ${base}/notype\n[binary content, ${PNG_HEAD.length} bytes, not shown]` });
  });

  it('sniffs UTF-8 only: text without a type, text cut inside a character and UTF-16 are still shown', async () => {
    expect(looksBinary(Buffer.from('plain text, no type\n\tindented'))).toBe(false);
    expect(looksBinary(Buffer.from('café ☕').subarray(0, -1))).toBe(false);
    expect(looksBinary(Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc]))).toBe(true);
    handler = (_req, res) => {
      res.setHeader('content-type', 'text/plain; charset=utf-16le');
      res.end(Buffer.from('héllo', 'utf16le'));
    };
    expect((await get('/utf16')).result?.content.split('\n')[1]).toBe('héllo');
  });

  it('drops a character the byte limit cut in two, rather than showing U+FFFD for it', async () => {
    // The regression: the cut body was decoded whole, so its last, incomplete "é" reached the model as "\uFFFD".
    handler = (req, res) => {
      res.setHeader('content-type', req.url === '/utf16' ? 'text/plain; charset=utf-16le' : 'text/plain; charset=utf-8');
      res.end(req.url === '/utf16' ? Buffer.from('é'.repeat(600), 'utf16le') : Buffer.from('é'.repeat(600)));
    };
    expect((await get('/utf8', { maxBytes: 1001 })).result?.content).toBe(`HTTP 200 text/plain; charset=utf-8 from ${base}/utf8\n${'é'.repeat(500)}\n[cut at 1001 bytes]`);
    expect((await get('/utf16', { maxBytes: 1001 })).result?.content).toBe(`HTTP 200 text/plain; charset=utf-16le from ${base}/utf16\n${'é'.repeat(500)}\n[cut at 1001 bytes]`);
    // A whole body that ends inside a character is the server's: its U+FFFD stays.
    handler = (_req, res) => {
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end(Buffer.from('é').subarray(0, 1));
    };
    expect((await get('/broken')).result?.content).toBe(`HTTP 200 text/plain; charset=utf-8 from ${base}/broken\n\uFFFD`);
  });

  it('decodes HTML in the charset its <meta> declares when the Content-Type names none', async () => {
    // The regression: such a page was read as UTF-8, and the model got "Caf\uFFFD" for "Café".
    const pages: Record<string, string> = {
      '/meta': '<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>',
      '/http-equiv': '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e</p></body></html>',
    };
    handler = (req, res) => {
      res.setHeader('content-type', req.url === '/header-wins' ? 'text/html; charset=utf-8' : 'text/html');
      res.end(req.url === '/header-wins' ? Buffer.from('<meta charset="windows-1252"><p>café</p>') : Buffer.from(pages[req.url!]!, 'latin1'));
    };
    for (const path of Object.keys(pages)) {
      expect((await get(path)).result?.content, path).toBe(`HTTP 200 text/html from ${base}${path}\nCafé\ncrème brûlée`);
    }
    // The header's charset wins over the page's own, as in a browser.
    expect((await get('/header-wins')).result?.content).toBe(`HTTP 200 text/html; charset=utf-8 from ${base}/header-wins\ncafé`);
  });

  it("takes a <meta>'s charset only from its charset attribute or an http-equiv Content-Type", async () => {
    // The regression: any meta whose text held "charset=" named the page's charset, so a
    // description that mentions one made a UTF-8 page decode as Latin-1 ("cafÃ©").
    const pages: Record<string, string> = {
      '/description': '<html><head><meta name="description" content="set charset=latin1 in your editor"><meta charset="utf-8"><title>café</title></head><body><p>crème</p></body></html>',
      '/quoted-gt': '<html><head><meta name="x" content="a > charset=latin1"><title>café</title></head><body><p>crème</p></body></html>',
    };
    handler = (req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(Buffer.from(pages[req.url!]!, 'utf8'));
    };
    for (const path of Object.keys(pages)) {
      expect((await get(path)).result?.content, path).toBe(`HTTP 200 text/html from ${base}${path}\ncafé\ncrème`);
    }
  });

  it('reads a body without a content type as HTML when it starts as a browser sniffs HTML', async () => {
    // The regression: with no Content-Type the page went to the model as raw markup, scripts and all.
    const bodies: Record<string, string> = {
      '/doctype': '\n  <!DOCTYPE html><html><head><title>Hi</title><script>var x = 1;</script></head><body><p>Body</p></body></html>',
      '/comment': '<!-- served bare --><html><head><title>Hi</title></head><body><p>Body</p></body></html>',
    };
    handler = (req, res) => {
      res.removeHeader('content-type');
      res.end(bodies[req.url!] ?? '<pre-release notes: 1.2 > 1.1');
    };
    for (const path of Object.keys(bodies)) {
      expect((await get(path)).result?.content, path).toBe(`HTTP 200 (no content type) from ${base}${path}\nHi\nBody`);
    }
    // Text that merely starts with '<' stays text.
    expect((await get('/plain')).result?.content).toBe(`HTTP 200 (no content type) from ${base}/plain\n<pre-release notes: 1.2 > 1.1`);
  });

  it('decodes windows-1252 (and ISO-8859-1, its WHATWG alias) punctuation as the characters it stands for', async () => {
    // The regression: Node 20.18.3+ and 22.13+ decode windows-1252 as Latin-1, so bytes 0x80-0x9F
    // (curly quotes, dashes, €) reached the model as invisible C1 control characters.
    handler = (req, res) => {
      res.setHeader('content-type', `text/plain; charset=${req.url!.slice(1)}`);
      res.end(Buffer.from([0x93, 0x41, 0x94, 0x20, 0x96, 0x20, 0x80, 0x35, 0x20, 0x92, 0x85]));
    };
    for (const charset of ['windows-1252', 'iso-8859-1']) {
      expect((await get(`/${charset}`)).result?.content.split('\n')[1], charset).toBe('“A” – €5 ’…');
    }
  });

  it("gives the page's title once, and only its own", async () => {
    // The regressions: without <head> the title was read again as the body's first words
    // ("Hello\nHello Body"), and an inline SVG's <title> was glued to the page's ("Pageicon").
    const pages: Record<string, string> = {
      '/no-head': '<!doctype html><title>Hello</title><p>Body</p>',
      '/svg': '<html><head><title>Hello</title></head><body><p>Body<svg><title>icon</title></svg></p></body></html>',
    };
    handler = (req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(pages[req.url!]);
    };
    for (const path of Object.keys(pages)) {
      expect((await get(path)).result?.content, path).toBe(`HTTP 200 text/html; charset=utf-8 from ${base}${path}\nHello\nBody`);
    }
  });

  it('decodes a gzip, deflate or brotli body that the server sent although identity was asked for', async () => {
    const encoders = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
    handler = (req, res) => {
      const encoding = req.url!.slice(1) as keyof typeof encoders;
      expect(req.headers['accept-encoding']).toBe('identity');
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': encoding });
      res.end(encoders[encoding](`hello ${encoding}`));
    };
    for (const encoding of Object.keys(encoders)) {
      expect((await get(`/${encoding}`)).result?.content, encoding).toBe(`HTTP 200 text/plain from ${base}/${encoding}\nhello ${encoding}`);
    }
  });

  it('cuts a decompressed body at maxBytes (a decompression bomb stops there) and describes an encoding it cannot decode', async () => {
    handler = (req, res) => {
      if (req.url === '/zstd') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'zstd' });
        return res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]));
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync('z'.repeat(10_000_000)));
    };
    const bomb = await get('/bomb', { maxBytes: 1000 });
    expect(bomb.result).toMatchObject({ ok: true, data: { bytes: 1000, truncated: true } });
    expect(bomb.result?.content).toBe(`HTTP 200 text/plain from ${base}/bomb\n${'z'.repeat(1000)}\n[cut at 1000 bytes]`);
    expect((await get('/zstd')).result?.content).toBe(`HTTP 200 text/plain from ${base}/zstd\n[zstd-encoded content, 7 bytes, not shown]`);
  });

  it('reports a compressed body that does not decode as an error that says so', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end('not gzip at all');
    };
    const run = await get('/bad');
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/failed: the body is gzip-encoded \(sent although identity was asked for\) and could not be decoded: /);
  });
});

describe('http_get: limits', () => {
  it('keeps the part of a slow body read before the time limit, and says which limit cut it', async () => {
    // The regression: "The operation was aborted due to timeout", and what was read was dropped.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
    };
    // 1 s for the connect, the head and the first part, which on a loaded machine 200 ms could miss; the rest never comes.
    const run = await get('/slow', { timeoutMs: 1000 });
    expect(run.result).toMatchObject({
      ok: true,
      content: `HTTP 200 text/plain from ${base}/slow\nfirst part\n[cut: the body was still arriving at the 1000 ms time limit; 10 bytes read]`,
      data: { bytes: 10, truncated: true, timedOut: true },
    });
    // The same through the decoder, for a server that compresses anyway.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      gzip.write('first part');
      gzip.flush();
    };
    expect((await get('/slow-gzip', { timeoutMs: 1000 })).result?.content).toBe(
      `HTTP 200 text/plain from ${base}/slow-gzip\nfirst part\n[cut: the body was still arriving at the 1000 ms time limit; 10 bytes read]`,
    );
  });

  it('names the time limit when no response came at all', async () => {
    handler = () => {};
    const run = await get('/silent', { timeoutMs: 150 });
    expect(run.result).toEqual({ ok: false, content: `error: GET ${base}/silent failed: no response within the 150 ms time limit` });
  });

  it('says that a redirect led to a private address, and names an IP literal once', async () => {
    handler = (req, res) => {
      res.writeHead(302, { location: req.url === '/to-name' ? `http://localhost:${new URL(base).port}/x` : 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    };
    const guarded = guardedConnector({ allowPrivateNetwork: false, connectTimeoutMs: 1000 });
    const direct = guardedConnector({ allowPrivateNetwork: true, connectTimeoutMs: 1000 });
    const fetch = (path: string) =>
      limitedGet(`${base}${path}`, { maxBytes: 1000, timeoutMs: 1000, maxRedirects: 5, userAgent: 't', signal: AbortSignal.timeout(5000), connectorFor: (origin) => (origin === base ? direct : guarded) });
    await expect(fetch('/to-meta')).rejects.toThrow(
      'redirected to http://169.254.169.254/latest/meta-data/, refused: 169.254.169.254 is a private network address; http_get only fetches public hosts',
    );
    await expect(fetch('/to-name')).rejects.toThrow(/^redirected to http:\/\/localhost:\d+\/x, refused: localhost is a private network address \(127\.0\.0\.1\)/);
  });

  it('follows a Location sent as raw UTF-8, and names a Location that is not a URL', async () => {
    // The regressions: a raw UTF-8 Location was read as Latin-1, so /café was asked for as
    // /caf%C3%83%C2%A9 (a 404); one that is not a URL failed as a bare "Invalid URL".
    handler = (req, res) => {
      if (req.url === '/moved') res.writeHead(302, { location: Buffer.from('/café?q=ü', 'utf8').toString('latin1') }).end();
      else if (req.url === '/broken') res.writeHead(301, { location: 'http://[::1' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(`at ${req.url}`);
    };
    expect((await get('/moved')).result?.content).toBe(`HTTP 200 text/plain from ${base}/caf%C3%A9?q=%C3%BC\nat /caf%C3%A9?q=%C3%BC`);
    expect((await get('/broken')).result).toMatchObject({ ok: false, content: expect.stringContaining('redirected to "http://[::1", which is not a URL') });
  });

  it('takes maxRedirects (and maxBytes, timeoutMs) from the --plugins settings', async () => {
    const config = builtinPluginsConfigSchema.parse({ http_get: { maxRedirects: 0, maxBytes: 10, timeoutMs: 1000 } });
    expect(config.http_get).toEqual({ maxRedirects: 0, maxBytes: 10, timeoutMs: 1000 });
    expect(() => builtinPluginsConfigSchema.parse({ http_get: { maxRedirects: -1 } })).toThrow();
    handler = (_req, res) => {
      res.writeHead(302, { location: '/elsewhere' });
      res.end();
    };
    expect((await get('/moved', config.http_get as HttpGetOptions)).result?.content).toBe(`error: GET ${base}/moved failed: more than 0 redirects`);
  });
});
