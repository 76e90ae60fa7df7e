import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

// sim/README.md's Counters section lists what `GET /sim/counters` and `GET /metrics` serve, which
// the benchmarks and any dashboard over the simulator read by name. Checked against a running
// simulator's answers rather than its source.
const README = readFileSync(new URL('../../sim/README.md', import.meta.url), 'utf8');
const COUNTERS = /## Counters\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', port: 0 });
});
afterAll(() => sim.close());

const origin = (): string => sim.url.replace(/\/v1$/, '');

describe('sim/README.md, Counters', () => {
  it('names every SimCounters field GET /sim/counters answers, and no other', async () => {
    const served = Object.keys((await (await fetch(`${origin()}/sim/counters`)).json()) as object).sort();
    const paragraph = /`SimCounters`[\s\S]*?\n\n/.exec(COUNTERS)?.[0] ?? '';
    const listed = [...new Set([...paragraph.matchAll(/`([a-z][A-Za-z]+)`/g)].map((m) => m[1]!))].sort();
    expect(served.length).toBeGreaterThan(10);
    expect(listed).toEqual(served);
  });

  it('names every metric GET /metrics serves, and no other', async () => {
    const text = await (await fetch(`${origin()}/metrics`)).text();
    const served = [...new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!))].sort();
    const listed = [...new Set([...COUNTERS.matchAll(/`((?:vllm|sim):[a-z0-9_]+)/g)].map((m) => m[1]!))].sort();
    expect(served.length).toBeGreaterThan(10);
    expect(listed).toEqual(served);
  });
});
