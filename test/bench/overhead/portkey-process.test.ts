import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../bench/overhead/portkey-process.ts';

const listen = (server: Server, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as { port: number }).port));
  });

// Portkey listens on every interface. Its port was checked on 127.0.0.1 alone: one taken on
// another address passed the check, and Portkey then died at start (EADDRINUSE) and left the run.
describe('the port Portkey is given', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  // 127.0.0.2 is loopback too on Linux, but another address than the one the check used.
  it('is refused when another address of the machine has it', async () => {
    const other = createServer();
    servers.push(other);
    const port = await listen(other, '127.0.0.2');
    await expect(freePort(port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('is one a server on every interface can take', async () => {
    const port = await freePort();
    const everywhere = createServer();
    servers.push(everywhere);
    await new Promise<void>((resolve, reject) => {
      everywhere.once('error', reject);
      everywhere.listen(port, resolve);
    });
    expect((everywhere.address() as { port: number }).port).toBe(port);
  });
});
