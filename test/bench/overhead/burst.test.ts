import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst } from '../../../bench/overhead/burst.ts';
import type { ChildTarget } from '../../../bench/overhead/child-target.ts';

/**
 * A simulator stand-in on a real socket: every open stream gets one token per turn of the event
 * loop, as a batch gets one per step, and GET /sim/counters answers as the simulator's does. Its
 * "CPU" is the tokens it has made: work that grows with every token, read at once, as /proc is.
 */
function tokenServer() {
  const open = new Set<{ res: ServerResponse; left: number }>();
  let generated = 0;
  let ticking = false;
  const tick = () => {
    for (const s of open) {
      generated++;
      s.res.write('data: {"choices":[{"delta":{"content":"x"}}]}\n\n');
      if (--s.left === 0) {
        open.delete(s);
        s.res.end('data: [DONE]\n\n');
      }
    }
    ticking = open.size > 0;
    if (ticking) setImmediate(tick);
  };
  const server = createServer((req, res) => {
    if (req.url === '/sim/counters') {
      res.end(JSON.stringify({ tokensGenerated: generated, running: open.size, waiting: 0 }));
      return;
    }
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const stream = { res, left: (JSON.parse(body) as { max_tokens: number }).max_tokens };
      res.on('close', () => open.delete(stream));
      open.add(stream);
      if (!ticking) {
        ticking = true;
        setImmediate(tick);
      }
    });
  });
  return { server, cpuMs: () => generated };
}

describe('one overhead burst', () => {
  const sim = tokenServer();
  let target: ChildTarget;
  beforeAll(async () => {
    await new Promise<void>((resolve) => sim.server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(sim.server.address() as AddressInfo).port}/v1`;
    target = { name: 'sim', pid: process.pid, url, cpuMs: sim.cpuMs, close: async () => {} };
  });
  afterAll(() => new Promise<void>((resolve) => sim.server.close(() => resolve())));

  // The CPU per 1,000 tokens divides one by the other, so both must cover one window. The CPU was
  // read when the last recorded stream ended, the token count only after a round trip to the
  // simulator while the filler streams still ran: the tokens of that round trip were counted, their
  // CPU not, and the gateway's CPU per token came out low.
  it('counts the tokens of the same window as the CPU it divides by them', async () => {
    const dispatcher = new Agent();
    try {
      for (const concurrency of [4, 8]) {
        const sample = await burst({ url: target.url, dispatcher }, concurrency, 1, target, target);
        expect(sample.errors).toEqual([]);
        expect(sample.timings).toHaveLength(concurrency);
        expect(sample.tokens).toBeGreaterThan(0);
        expect(sample.cpuMs).toBe(sample.tokens);
        expect(sample.simCpuMs).toBe(sample.tokens);
      }
    } finally {
      await dispatcher.close();
    }
  });
});
