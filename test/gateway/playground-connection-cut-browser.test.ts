import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// The connection cut while the answer streams (the gateway killed, a proxy or Wi-Fi gone): the
// page said "error: network error", the browser's words, where a stream that ended early said
// the connection was cut and the answer incomplete. A chunked response cut short is the usual
// way a stream ends early, so the plain words were almost never the ones shown.

/** A TCP relay to `port` on loopback whose connections `cut()` destroys: the network gone. */
async function relay(port: number): Promise<{ server: Server; url: string; cut: () => void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

describeInBrowser('the playground, its connection cut mid-answer (Chromium)', () => {
  const suite = browserAndConveyor();

  it('says the connection was cut and the answer is incomplete, not the browser\'s "network error"', async () => {
    const { server, url, cut } = await relay(Number(new URL(suite.conveyor.gateway.url).port));
    try {
      await suite.withPage(async (page) => {
        await openPlayground(page, url);
        await page.click('#examples button:text-is("Python: sine wave")');
        await page.click('#send');
        await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
        cut();
        await page.waitForSelector('.turn.assistant.finished');
        const note = await page.textContent('.turn.assistant .note');
        expect(note).toMatch(/^error: the connection was cut before the answer's end \(.+\): the answer is incomplete$/);
        expect(await page.textContent('#status')).toMatch(/^error: the connection was cut before the answer's end/);
        expect(await page.getAttribute('.turn.assistant', 'class')).toBe('turn assistant failed finished');
        expect(await page.textContent('.turn.user .note')).toBe('left out of the conversation: its answer was cut short');
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 90_000);
});
