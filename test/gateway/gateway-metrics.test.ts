import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { GatewayMetrics } from '../../gateway/gateway-metrics.ts';
import { UpstreamReplicas } from '../../llm-client/upstream-replicas.ts';
import { Timeline } from '../../gateway/timeline.ts';
import { definePlugin, reject } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { postJson } from '../support/sse-client.ts';

const lookup = definePlugin({
  name: 'lookup',
  description: 'Looks a key up; refuses the key "secret" as soon as it is decoded',
  parameters: z.object({ key: z.string() }),
  consumes: 'field',
  hooks: {
    onPiece: (piece) => (piece.kind === 'field' && piece.value === 'secret' ? reject('that key is not allowed') : undefined),
    onEnd: ({ key }) => `value-of-${key}`,
  },
});

const scenarios: Scenario[] = [
  {
    name: 'lookup-once',
    rules: [
      { when: { explicit: true, round: 1 }, reply: '[TOOL_CALLS][{"name": "lookup", "arguments": {"key": "a"}}]' },
      { when: { explicit: true, round: 2 }, reply: 'Found {{tool_output}}.' },
    ],
  },
  {
    name: 'lookup-secret',
    rules: [
      { when: { explicit: true, lastRole: 'user' }, reply: '[TOOL_CALLS][{"name": "lookup", "arguments": {"key": "secret", "reason": "I was asked to"}}]' },
      { when: { explicit: true, lastRole: 'tool' }, reply: 'I may not look that up.' },
    ],
  },
];

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics (Prometheus)', () => {
  let sims: SimHandle[];
  let gateway: GatewayHandle;
  beforeAll(async () => {
    sims = await Promise.all([0, 1].map(() => startSim({ profile: E2E_PROFILE, scenarios })));
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sims.map((s) => s.url) }, apiKeys: ['k'] }, { tools: new Map([['lookup', inlineTool(lookup)]]) });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it('counts requests by outcome, tool calls by tool and outcome, and times them; open to scrapers without a key', async () => {
    const auth = { authorization: 'Bearer k' };
    const ask = (scenario: string) => postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, scenario, messages: [{ role: 'user', content: 'Look it up.' }] }, auth);
    const answers = [await ask('lookup-once'), await ask('lookup-once'), await ask('lookup-secret')];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const usage = (kind: 'prompt_tokens' | 'completion_tokens') => answers.reduce((sum, a) => sum + (a.json.usage[kind] as number), 0);
    expect((await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [] }, auth)).status).toBe(400);
    // Refused before the route runs (no key, a wrong method): counted by their codes all the same.
    expect((await postJson(gateway.url, '/v1/chat/completions', { model: SIM_MODEL, messages: [] })).status).toBe(401);
    expect((await fetch(`${gateway.url}/v1/chat/completions`, { headers: auth })).status).toBe(405);

    const res = await fetch(`${gateway.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(sample(text, 'conveyor_requests_total{outcome="answer"}')).toBe(3);
    expect(sample(text, 'conveyor_requests_total{outcome="invalid_request"}')).toBe(1);
    expect(sample(text, 'conveyor_requests_total{outcome="invalid_api_key"}')).toBe(1);
    expect(sample(text, 'conveyor_requests_total{outcome="method_not_allowed"}')).toBe(1);
    // Known outcomes exist from the first scrape, so a rate over them reads 0 rather than nothing.
    expect(sample(text, 'conveyor_requests_total{outcome="length"}')).toBe(0);
    expect(sample(text, 'conveyor_tool_calls_total{tool="lookup",outcome="stopped"}')).toBe(0);
    expect(sample(text, 'conveyor_requests_in_flight')).toBe(0);
    expect(sample(text, 'conveyor_rounds_total')).toBe(6);
    // Every round's tokens as the upstream reported them, which is what the answers' usage adds up.
    expect(sample(text, 'conveyor_tokens_total{kind="prompt"}')).toBe(usage('prompt_tokens'));
    expect(sample(text, 'conveyor_tokens_total{kind="completion"}')).toBe(usage('completion_tokens'));
    expect(usage('prompt_tokens')).toBeGreaterThan(0);
    // Without maxConcurrentRequests there is no line to wait in, and no histogram of it.
    expect(text).not.toMatch(/conveyor_request_queue_seconds/);
    expect(sample(text, 'conveyor_tool_calls_total{tool="lookup",outcome="ok"}')).toBe(2);
    expect(sample(text, 'conveyor_tool_calls_total{tool="lookup",outcome="rejected"}')).toBe(1);
    expect(sample(text, 'conveyor_tool_duration_seconds_count{tool="lookup"}')).toBe(2);
    expect(sample(text, 'conveyor_time_to_first_token_seconds_count')).toBe(3);
    expect(sample(text, 'conveyor_request_duration_seconds_count')).toBe(3);
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_count')).toBeGreaterThanOrEqual(2);
    // The replicas, read when scraped: every round was accepted by one of them.
    const accepted = sims.map((s) => sample(text, `conveyor_upstream_replica_accepted_total{replica="${s.url}"}`) ?? 0);
    expect(accepted.reduce((a, b) => a + b)).toBe(6);
    for (const s of sims) expect(sample(text, `conveyor_upstream_replica_healthy{replica="${s.url}"}`)).toBe(1);
    // Node's own process metrics come along.
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
  });
});

describe('conveyor_tool_calls_total for a request that ended before its call', () => {
  it('counts the call once, as stopped, whether or not its end is marked after the request\'s', async () => {
    const metrics = new GatewayMetrics();
    const timeline = new Timeline('chatcmpl-stopped');
    timeline.mark('round-start', { round: 1 });
    timeline.mark('tool-start', { round: 1, callId: 'c1', detail: 'python' });
    timeline.mark('tool-start', { round: 1, callId: 'c2', detail: 'python' });
    timeline.mark('tool-end', { round: 1, callId: 'c2', detail: 'ok' });
    timeline.mark('request-end', { detail: 'upstream_connection_error' });
    // The stopped tool reports after the request's end, as a killed cell does.
    timeline.mark('tool-end', { round: 1, callId: 'c1', detail: 'error' });
    metrics.requestStarted();
    metrics.requestEnded(timeline);
    const text = await metrics.render();
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="stopped"}')).toBe(1);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="ok"}')).toBe(1);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="error"}')).toBeUndefined();
    expect(sample(text, 'conveyor_requests_total{outcome="upstream_connection_error"}')).toBe(1);
  });
});

/** A request's timeline with a round in it, for the unit tests below. */
function roundTimeline(id: string): Timeline {
  const timeline = new Timeline(id);
  timeline.mark('round-start', { round: 1 });
  timeline.mark('upstream-accepted', { round: 1, detail: 'http://upstream/v1' });
  return timeline;
}

async function ended(timeline: Timeline): Promise<string> {
  const metrics = new GatewayMetrics({ toolNames: ['python'] });
  metrics.requestStarted();
  metrics.requestEnded(timeline);
  return metrics.render();
}

describe('conveyor_tool_calls_total and conveyor_tool_duration_seconds, from a timeline', () => {
  it('counts a call the client\'s leaving stopped while it was being written as stopped, not error, and does not time it', async () => {
    const timeline = roundTimeline('chatcmpl-left');
    timeline.mark('tool-start', { round: 1, callId: 'c1', detail: 'python' });
    timeline.mark('tool-end', { round: 1, callId: 'c1', detail: 'aborted' });
    timeline.mark('abort', { round: 1, detail: 'client aborted' });
    timeline.mark('request-end', { detail: 'client_aborted' });
    const text = await ended(timeline);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="stopped"}')).toBe(1);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="error"}')).toBe(0);
    expect(sample(text, 'conveyor_tool_duration_seconds_count{tool="python"}')).toBeUndefined();
    // Its decode never ended: the round waited for nothing after it.
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_count')).toBe(0);
  });

  it('counts a call the parser found malformed (or the token limit cut) as cancelled', async () => {
    const timeline = roundTimeline('chatcmpl-cut');
    timeline.mark('tool-start', { round: 1, callId: 'c1', detail: 'python' });
    timeline.mark('abort', { round: 1, callId: 'c1', detail: 'malformed: truncated call' });
    timeline.mark('tool-end', { round: 1, callId: 'c1', detail: 'cancelled' });
    timeline.mark('decode-end', { round: 1, detail: 'length' });
    timeline.mark('request-end', { detail: 'length' });
    const text = await ended(timeline);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="cancelled"}')).toBe(1);
    expect(sample(text, 'conveyor_tool_calls_total{tool="python",outcome="stopped"}')).toBe(0);
    expect(sample(text, 'conveyor_rounds_total')).toBe(1);
  });

  it("times a call from the moment it was whole, not from its first piece: the model's writing is not tool time", async () => {
    const timeline = roundTimeline('chatcmpl-partial');
    timeline.mark('tool-start', { round: 1, callId: 'c1', detail: 'python' });
    // The model writes the call for a while; its statements run meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 60));
    timeline.mark('call-end', { round: 1, callId: 'c1' });
    timeline.mark('decode-end', { round: 1, detail: 'tool_calls' });
    timeline.mark('tool-end', { round: 1, callId: 'c1', detail: 'ok' });
    timeline.mark('round-end', { round: 1 });
    timeline.mark('request-end', { detail: 'answer' });
    const text = await ended(timeline);
    expect(sample(text, 'conveyor_tool_duration_seconds_count{tool="python"}')).toBe(1);
    // From call-end to tool-end (back to back here), not from tool-start: less than the writing.
    const at = (type: string) => timeline.events.find((e) => e.type === type)!.t;
    expect(sample(text, 'conveyor_tool_duration_seconds_sum{tool="python"}')).toBeCloseTo((at('tool-end') - at('call-end')) / 1000, 6);
    expect(at('call-end') - at('tool-start')).toBeGreaterThan(50);
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_count')).toBe(1);
  });

  it('counts a round once when a second replica took it over (the first failed before its first token)', async () => {
    const timeline = roundTimeline('chatcmpl-failover');
    timeline.mark('upstream-accepted', { round: 1, detail: 'http://other/v1' });
    timeline.mark('decode-end', { round: 1, detail: 'stop' });
    timeline.mark('request-end', { detail: 'answer' });
    expect(sample(await ended(timeline), 'conveyor_rounds_total')).toBe(1);
  });

  it('does not count a round the upstream refused as a model round', async () => {
    const timeline = new Timeline('chatcmpl-refused');
    timeline.mark('round-start', { round: 1 });
    timeline.mark('request-end', { detail: 'model_not_found' });
    expect(sample(await ended(timeline), 'conveyor_rounds_total')).toBe(0);
  });
});

describe('conveyor_tool_wait_after_decode_seconds, from a timeline', () => {
  /** A round whose one python call starts, ends as `detail` and is marked around its decode's end as `order` says. */
  function toolRound(id: string, order: Array<'tool-start' | 'tool-end' | 'decode-end' | 'round-end'>, detail = 'ok'): Timeline {
    const timeline = roundTimeline(id);
    for (const type of order) timeline.mark(type, { round: 1, ...(type.startsWith('tool') ? { callId: 'c1', detail: type === 'tool-start' ? 'python' : detail } : {}) });
    return timeline;
  }

  it('observes a round whose tool was done, in no time, before its decode ended: 0, in the lowest bucket', async () => {
    const timeline = toolRound('chatcmpl-hidden', ['tool-start', 'tool-end', 'decode-end', 'round-end']);
    // A calculator's start and end in the same microsecond: the round's tool time is 0.
    const [start, end] = timeline.events.filter((e) => e.type.startsWith('tool-'));
    end!.t = start!.t;
    timeline.mark('request-end', { detail: 'answer' });
    const text = await ended(timeline);
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_count')).toBe(1);
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_sum')).toBe(0);
    expect(sample(text, 'conveyor_tool_wait_after_decode_seconds_bucket{le="0.005"}')).toBe(1);
  });

  it('does not observe a round whose tool the client stopped after the decode ended: the round never had its answer', async () => {
    const timeline = toolRound('chatcmpl-left-after-decode', ['tool-start', 'decode-end', 'tool-end'], 'aborted');
    timeline.mark('abort', { round: 1, detail: 'client aborted' });
    timeline.mark('request-end', { detail: 'client_aborted' });
    expect(sample(await ended(timeline), 'conveyor_tool_wait_after_decode_seconds_count')).toBe(0);
  });

  it('does not observe a round without gateway tools', async () => {
    const timeline = toolRound('chatcmpl-no-tools', ['decode-end', 'round-end']);
    timeline.mark('request-end', { detail: 'answer' });
    expect(sample(await ended(timeline), 'conveyor_tool_wait_after_decode_seconds_count')).toBe(0);
  });
});

describe('conveyor_upstream_replica_*_total, read from the replica set when scraped', () => {
  it('has every replica from the first scrape, at 0, so that its first failure reads as an increase', async () => {
    const replicas = new UpstreamReplicas(['http://a.test/v1', 'http://b.test/v1']);
    const metrics = new GatewayMetrics({ replicas });
    const first = await metrics.render();
    for (const url of ['http://a.test/v1', 'http://b.test/v1']) {
      expect(sample(first, `conveyor_upstream_replica_accepted_total{replica="${url}"}`)).toBe(0);
      expect(sample(first, `conveyor_upstream_replica_failures_total{replica="${url}"}`)).toBe(0);
    }
    const [a, b] = replicas.replicas;
    replicas.failed(b!, new Error('connect ECONNREFUSED'));
    replicas.succeeded(a!);
    const second = await metrics.render();
    expect(sample(second, 'conveyor_upstream_replica_failures_total{replica="http://b.test/v1"}')).toBe(1);
    expect(sample(second, 'conveyor_upstream_replica_failures_total{replica="http://a.test/v1"}')).toBe(0);
    expect(sample(second, 'conveyor_upstream_replica_accepted_total{replica="http://a.test/v1"}')).toBe(1);
    expect(sample(second, 'conveyor_upstream_replica_accepted_total{replica="http://b.test/v1"}')).toBe(0);
  });
});
