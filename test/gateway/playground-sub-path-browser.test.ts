import { request, createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { runExample, modelsListed } from '../support/playground-page.ts';

// Behind a reverse proxy that serves the gateway under a path (an ingress's `/conveyor/`), the
// page asked for `/v1/models`, `/playground/…` and its events socket at the site's root, which
// the proxy does not route to the gateway: an empty page with no models. Its URLs are relative now.

/** A reverse proxy that serves the gateway at `port` under `/conveyor/`, WebSocket upgrades included, and nothing else. */
async function subPathProxy(port: number): Promise<{ server: Server; url: string }> {
  const strip = (req: IncomingMessage): string | undefined => (req.url?.startsWith('/conveyor/') ? req.url.slice('/conveyor'.length) : undefined);
  const server = createServer((req, res) => {
    const path = strip(req);
    if (path === undefined) return void res.writeHead(404).end('not under /conveyor/');
    const upstream = request({ host: '127.0.0.1', port, path, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('upgrade', (req, client, head) => {
    const path = strip(req);
    if (path === undefined) return void client.destroy();
    const upstream = connect(port, '127.0.0.1', () => {
      const lines = [`${req.method} ${path} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    for (const socket of [client, upstream]) socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describeInBrowser('the playground served under a sub-path by a reverse proxy (Chromium)', () => {
  const suite = browserAndConveyor();

  it('loads, lists the models, answers and draws the timeline through /conveyor/', async () => {
    const { server, url } = await subPathProxy(Number(new URL(suite.conveyor.gateway.url).port));
    try {
      await suite.withPage(async (page) => {
        await page.goto(`${url}/conveyor/`);
        await modelsListed(page);
        await runExample(page, 'Calculator');
        await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length >= 1);
        expect(await page.$eval('#status', (status) => status.classList.contains('error'))).toBe(false);
        expect(await page.textContent('.turn.assistant .content')).toContain('140200');
        // The path the status line gives for the timeline is the one this page reaches it at.
        await page.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('done'));
        expect(await page.textContent('#status')).toMatch(/ · its timeline: \/conveyor\/v1\/requests\/\S+\/timeline$/);
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 90_000);
});
