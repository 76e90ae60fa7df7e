import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { spawnTarget, type ChildTarget } from './child-target.ts';

const START_SERVER = fileURLToPath(new URL('../../node_modules/@portkey-ai/gateway/build/start-server.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./portkey-preload.mjs', import.meta.url));
const EXIT_WITH_STDIN = fileURLToPath(new URL('./exit-with-stdin.mjs', import.meta.url));

export interface PortkeyTarget extends ChildTarget {
  /** Headers that route a request through Portkey's openai provider to `upstreamUrl`. */
  headers: Record<string, string>;
  version: string;
}

export interface StartPortkeyOptions {
  /** Starts tried, each on a fresh port, before giving up on a port taken (default 3). */
  attempts?: number;
  /** Each try's port (default: freePort()); a test hands out one it holds. */
  nextPort?: () => Promise<number>;
}

/**
 * The peer gateway: @portkey-ai/gateway (a devDependency) in its own process, production mode
 * (no log UI), forwarding to `upstreamUrl` with its openai provider and a custom host.
 * Resolves `{ error }` instead of throwing when it cannot run here, so the benchmark goes on without it.
 */
export async function startPortkey(upstreamUrl: string, o: StartPortkeyOptions = {}): Promise<PortkeyTarget | { error: string }> {
  if (!existsSync(START_SERVER)) return { error: 'not installed (npm install -D @portkey-ai/gateway)' };
  const attempts = o.attempts ?? 3;
  const nextPort = o.nextPort ?? (() => freePort());
  const taken: number[] = [];
  try {
    for (;;) {
      const port = await nextPort();
      try {
        const target = await spawnPortkey(port);
        return {
          ...target,
          url: `http://127.0.0.1:${target.url}/v1`,
          headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstreamUrl, authorization: 'Bearer sim' },
          version: await portkeyVersion(),
        };
      } catch (err) {
        // Portkey cannot pick a port itself, so one is checked free first; another process can take
        // it before Portkey listens (a shared host, a parallel bench), and Portkey then dies at start
        // with EADDRINUSE. Another port is as good: the run went on without Portkey for that race.
        if (!/EADDRINUSE/.test((err as Error).message)) throw err;
        taken.push(port);
        if (taken.length >= attempts) {
          throw new Error(`port${attempts === 1 ? '' : 's'} ${taken.join(', ')} taken by another process before Portkey listened (EADDRINUSE), ${attempts} tr${attempts === 1 ? 'y' : 'ies'}`);
        }
      }
    }
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function spawnPortkey(port: number): Promise<ChildTarget> {
  return spawnTarget({
    name: 'portkey',
    // It takes only --port=N (no 0 = any port) and always prints http://localhost:N, about 1 s
    // after it listens: a listen that fails (EADDRINUSE) kills it before it prints.
    args: ['--import', PRELOAD, '--import', EXIT_WITH_STDIN, START_SERVER, `--port=${port}`, '--headless'],
    env: { ...process.env, NODE_ENV: 'production' },
    urlLine: /http:\/\/localhost:(\d+)/,
    timeoutMs: 20_000,
  });
}

async function portkeyVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../../node_modules/@portkey-ai/gateway/package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * A port nobody listens on, on any interface (Portkey cannot be told to pick one itself): `port`,
 * or with 0 one the system picks. Checked on every interface, as Portkey listens: checked on
 * 127.0.0.1 alone, a port another address had passed, and Portkey then died at start. A port
 * taken rejects with its EADDRINUSE.
 */
export function freePort(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, () => {
      const { port: taken } = server.address() as { port: number };
      server.close(() => resolve(taken));
    });
  });
}
