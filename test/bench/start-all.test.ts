import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startAll } from '../../bench/start-all.ts';

const listen = (server: Server) => new Promise<Server>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('startAll', () => {
  it('returns everything it started, in order, when all start', async () => {
    const servers = await startAll(3, () => listen(createServer()), close);
    expect(servers.map((s) => s.listening)).toEqual([true, true, true]);
    await Promise.all(servers.map(close));
  });

  it('closes the ones that started when one cannot, then throws its error', async () => {
    const started: Server[] = [];
    const closed: Server[] = [];
    const attempt = startAll(
      3,
      async (i) => {
        if (i === 1) throw new Error('stand 1 cannot start');
        const server = await listen(createServer());
        started.push(server);
        return server;
      },
      async (server) => {
        closed.push(server);
        await close(server);
      },
    );
    await expect(attempt).rejects.toThrow('stand 1 cannot start');
    expect(started).toHaveLength(2);
    expect(closed).toEqual(expect.arrayContaining(started));
    expect(started.map((s) => s.listening)).toEqual([false, false]);
  });
});
