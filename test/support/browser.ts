import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative } from 'node:path';
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

/** The official openai package's ES modules, which a page imports from `/openai/index.mjs`. */
const OPENAI_DIR = dirname(createRequire(import.meta.url).resolve('openai'));

/**
 * A blank page served from 127.0.0.1 on a port of its own: an origin for the browser to run
 * scripts on. It also serves the openai package under `/openai/`, so a page can use the official
 * client as a browser app bundles it.
 */
export async function servePage(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    if (path.startsWith('/openai/') && path.endsWith('.mjs')) {
      const file = join(OPENAI_DIR, path.slice('/openai/'.length));
      if (!relative(OPENAI_DIR, file).startsWith('..') && existsSync(file)) {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
        return;
      }
      res.writeHead(404).end();
      return;
    }
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
