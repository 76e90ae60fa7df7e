import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (`apt-get install chromium`; .ci/run installs it), or the one CHROMIUM_PATH
 * names. Undefined where none is installed: the browser tests then say they were skipped, except
 * under CI, where a missing browser fails them.
 */
export const chromiumPath: string | undefined = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path): path is string => path !== undefined && path !== '' && existsSync(path),
);

export const browserRequired = process.env.CI === 'true';

/** A headless Chromium; runs as root here, hence no sandbox of its own. */
export function launchBrowser(): Promise<Browser> {
  if (chromiumPath === undefined) throw new Error('no Chromium: apt-get install chromium, or set CHROMIUM_PATH');
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A blank page served from 127.0.0.1 on a port of its own: an origin for the browser to run scripts on. */
export async function servePage(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>page</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
