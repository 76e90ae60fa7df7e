import { createServer, type AddressInfo, type Socket } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { getJson, postJson } from '../support/sse-client.ts';

const lookup = definePlugin({
  name: 'lookup',
  description: 'Looks a key up',
  parameters: z.object({ key: z.string() }),
  consumes: 'field',
  hooks: { onEnd: ({ key }) => `value-of-${key}` },
});

/** Three rounds: two tool calls, then the answer. */
const threeRounds: Scenario = {
  name: 'three-rounds',
  rules: [
    { when: { explicit: true, round: 1 }, reply: '[TOOL_CALLS][{"name": "lookup", "arguments": {"key": "a"}}]' },
    { when: { explicit: true, round: 2 }, reply: '[TOOL_CALLS][{"name": "lookup", "arguments": {"key": "b"}}]' },
    { when: { explicit: true, round: 3 }, reply: 'Found {{tool_output}}.' },
  ],
};

const body = { model: SIM_MODEL, scenario: 'three-rounds', messages: [{ role: 'user', content: 'Look a and b up.' }] };

describe('a gateway in front of several replicas of one model', () => {
  let sims: SimHandle[] = [];
  let gateway: GatewayHandle;
  let spreading: GatewayHandle;

  beforeAll(async () => {
    sims = await Promise.all([0, 1].map(() => startSim({ profile: E2E_PROFILE, scenarios: [threeRounds] })));
    const tools = new Map([['lookup', inlineTool(lookup)]]);
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sims.map((s) => s.url) } }, { tools });
    spreading = await startGateway({ port: 0, upstream: { baseUrl: sims.map((s) => s.url), conversationAffinity: false } }, { tools });
  });
  afterAll(async () => {
    await spreading?.close();
    await gateway?.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  async function acceptedBy(requestId: string | null, via = gateway): Promise<string[]> {
    const timeline = await getJson(via.url, `/v1/requests/${requestId}/timeline`);
    return (timeline.json.events as TimelineEvent[]).filter((e) => e.type === 'upstream-accepted').map((e) => e.detail!);
  }

  it('spreads conversations over the replicas and keeps each conversation’s rounds on one of them', async () => {
    const before = sims.map((s) => s.counters().requestsReceived);
    const responses = await Promise.all(Array.from({ length: 6 }, () => postJson(gateway.url, '/v1/chat/completions', body)));
    const servedBy = new Set<string>();
    for (const res of responses) {
      expect(res.status).toBe(200);
      expect(res.json.choices[0].message.content).toContain('Found value-of-b.');
      const rounds = await acceptedBy(res.headers.get('x-conveyor-request-id'));
      expect(rounds).toHaveLength(3);
      expect(new Set(rounds).size).toBe(1);
      servedBy.add(rounds[0]!);
    }
    expect(servedBy).toEqual(new Set(sims.map((s) => s.url)));
    const received = sims.map((s, i) => s.counters().requestsReceived - before[i]!);
    expect(received.reduce((a, b) => a + b)).toBe(18);
    for (const n of received) expect(n % 3).toBe(0);
  });

  it("finds a conversation's earlier rounds in its replica's prefix cache; spread over replicas, it mostly does not", async () => {
    const hits = () => sims.reduce((sum, s) => sum + s.counters().prefixCacheHits, 0);
    const conversation = async (via: GatewayHandle, topic: string) => {
      const before = hits();
      const unique = { ...body, messages: [{ role: 'user', content: `${topic}: ${'look every key up, one at a time, and report. '.repeat(8)}` }] };
      const res = await postJson(via.url, '/v1/chat/completions', unique);
      expect(res.status).toBe(200);
      return { rounds: await acceptedBy(res.headers.get('x-conveyor-request-id'), via), hits: hits() - before };
    };
    const kept = await conversation(gateway, 'Zebras');
    const spread = await conversation(spreading, 'Yaks');
    expect(new Set(kept.rounds).size).toBe(1);
    // One conversation alone: the least loaded replica alternates, so rounds 1 and 3 share one.
    expect(new Set(spread.rounds).size).toBe(2);
    expect(kept.hits).toBeGreaterThan(spread.hits);
  });

  it("sends a client's next turns to the replica that served its first, where they find it in its prefix cache", async () => {
    // Each turn resends the conversation so far, as a chat client does.
    const opening = (topic: string) => ({ role: 'user', content: `${topic}: ${'look every key up and report. '.repeat(8)}` });
    const turns = async (via: GatewayHandle, topic: string) => {
      const messages: Array<{ role: string; content: string }> = [opening(topic)];
      const replicas: string[] = [];
      for (let turn = 0; turn < 3; turn++) {
        const res = await postJson(via.url, '/v1/chat/completions', { ...body, messages });
        expect(res.status).toBe(200);
        replicas.push(...new Set(await acceptedBy(res.headers.get('x-conveyor-request-id'), via)));
        messages.push({ role: 'assistant', content: res.json.choices[0].message.content }, { role: 'user', content: `And key ${turn}?` });
      }
      return replicas;
    };
    const hits = () => sims.reduce((sum, s) => sum + s.counters().prefixCacheHits, 0);
    let before = hits();
    const kept = await turns(gateway, 'Otters');
    const keptHits = hits() - before;
    expect(kept).toHaveLength(3);
    expect(new Set(kept).size).toBe(1);
    // Without affinity every round, and so every turn, goes to the least loaded (here: the next) replica.
    before = hits();
    expect(new Set(await turns(spreading, 'Lynxes')).size).toBe(2);
    expect(keptHits).toBeGreaterThan(hits() - before);
    // A first turn that opens alike is a new conversation: the least loaded replica takes it, not the remembered one.
    const firstTurns: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await postJson(gateway.url, '/v1/chat/completions', { ...body, messages: [opening('Otters')] });
      firstTurns.push((await acceptedBy(res.headers.get('x-conveyor-request-id')))[0]!);
    }
    expect(new Set(firstTurns).size).toBe(2);
  });

  it('shows each replica’s load and health on /health', async () => {
    const health = await getJson(gateway.url, '/health');
    expect(health.json.upstream).toEqual(sims.map((s) => s.url));
    expect(health.json.upstream_replicas).toHaveLength(2);
    for (const replica of health.json.upstream_replicas) {
      expect(replica).toMatchObject({ healthy: true, in_flight: 0, consecutive_failures: 0 });
      expect(replica.accepted).toBeGreaterThan(0);
    }
  });

  it('keeps answering when a replica goes down: its requests move to the other, no client sees an error', async () => {
    const [gone, left] = sims as [SimHandle, SimHandle];
    await gone.close();
    // New conversations (an opening not seen before, so no replica remembered for it): the least loaded takes each.
    const fresh = { ...body, messages: [{ role: 'user', content: 'A replica is down: look a and b up.' }] };
    const responses = await Promise.all(Array.from({ length: 4 }, () => postJson(gateway.url, '/v1/chat/completions', fresh)));
    for (const res of responses) {
      expect(res.status).toBe(200);
      expect(await acceptedBy(res.headers.get('x-conveyor-request-id'))).toEqual([left.url, left.url, left.url]);
    }
    const health = await getJson(gateway.url, '/health');
    const down = health.json.upstream_replicas.find((r: { base_url: string }) => r.base_url === gone.url);
    expect(down).toMatchObject({ healthy: false });
    expect(down.failures).toBeGreaterThan(0);

    const models = await getJson(gateway.url, '/v1/models');
    expect(models.status).toBe(200);
    expect(models.json.data[0].id).toBe(SIM_MODEL);
  });
});

describe('/v1/models in front of several replicas', () => {
  it('answers from the replica that answers first, not after one that hangs, and then cuts the hung request (regression: a socket left open per call)', async () => {
    // A replica that takes connections and never answers (a wedged server), listed first.
    const sockets = new Set<Socket>();
    // Closed when the socket carrying it closes. (undici may open a spare connection after an
    // abort, which carries no request: only those that did are waited for.)
    const requestsClosed: Promise<void>[] = [];
    const hung = createServer((socket) => {
      sockets.add(socket);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.once('data', () => requestsClosed.push(closed));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/v1`;
    const sim = await startSim({ profile: E2E_PROFILE });
    const gateway = await startGateway({ port: 0, upstream: { baseUrl: [hungUrl, sim.url], timeouts: { headersMs: 60_000 } } }, { tools: new Map() });
    try {
      for (let i = 0; i < 3; i++) {
        const models = await getJson(gateway.url, '/v1/models');
        expect(models.status).toBe(200);
        expect(models.json.data[0].id).toBe(SIM_MODEL);
      }
      // Each call asked the hung replica too, and let it go once the sim had answered (long
      // before the 60 s headers timeout, which would otherwise hold each socket open).
      expect(requestsClosed.length).toBeGreaterThanOrEqual(3);
      await Promise.all(requestsClosed);
    } finally {
      for (const socket of sockets) socket.destroy();
      hung.close();
      await gateway.close();
      await sim.close();
    }
  });
});
