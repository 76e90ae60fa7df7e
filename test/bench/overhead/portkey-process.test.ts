import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startPortkey, type PortkeyTarget } from '../../../bench/overhead/portkey-process.ts';

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

// The port is checked free before Portkey starts; another process could take it in between, and
// Portkey died at start (EADDRINUSE): the run went on without the peer gateway.
describe('Portkey given a port another process took after the check', () => {
  const held = createServer();
  const started: PortkeyTarget[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((p) => p.close()));
    await new Promise((resolve) => (held.listening ? held.close(resolve) : resolve(undefined)));
  });
  const hold = () =>
    new Promise<number>((resolve, reject) => {
      held.once('error', reject);
      held.listen(0, () => resolve((held.address() as { port: number }).port));
    });

  it('starts on a fresh port', async () => {
    const port = await hold();
    const ports = [port];
    const portkey = await startPortkey('http://127.0.0.1:9/v1', { nextPort: async () => ports.shift() ?? freePort() });
    if ('error' in portkey) throw new Error(portkey.error);
    started.push(portkey);
    expect(portkey.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(portkey.url).not.toContain(`:${port}/`);
    expect(ports).toEqual([]);
    const res = await fetch(portkey.url.replace(/\/v1$/, '/'));
    expect(await res.text()).toBe('AI Gateway says hey!');
  }, 60_000);

  it('gives up after its tries with an error that says the ports were taken', async () => {
    const port = await hold();
    let asked = 0;
    const portkey = await startPortkey('http://127.0.0.1:9/v1', { attempts: 2, nextPort: async () => (asked++, port) });
    expect(asked).toBe(2);
    expect(portkey).toEqual({ error: `ports ${port}, ${port} taken by another process before Portkey listened (EADDRINUSE), 2 tries` });
  }, 60_000);
});
