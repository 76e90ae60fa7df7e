import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();

/** An upstream that holds every stream open after its first token until the test finishes it. */
function holdingUpstream() {
  const held: ServerResponse[] = [];
  const handler = (_req: unknown, res: ServerResponse, body: unknown) => {
    sseHeaders(res);
    res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: `answer to ${(body as { messages: Array<{ content: string }> }).messages[0]!.content}` }));
    held.push(res);
  };
  const finish = (res: ServerResponse) => res.end(vllmChunk({ content: '' }, 'stop') + DONE);
  return { held, handler, finish };
}

const ask = (content: string) => ({ model: MODEL, stream: true, messages: [{ role: 'user', content }] });
const asked = () => scripted.upstream.requests.map((r) => (r.body as { messages: Array<{ content: string }> }).messages[0]!.content);

describe('maxConcurrentRequests: requests beyond it wait in line, and beyond the line are turned away', () => {
  it('queues the third request, refuses the fourth with 503 gateway_busy and Retry-After, and lets the third in when a place frees', async () => {
    const upstream = holdingUpstream();
    const gw = await scripted.start(upstream.handler, {}, { maxConcurrentRequests: 2, maxQueuedRequests: 1 });
    const first = streamChat(gw.url, ask('one'));
    const second = streamChat(gw.url, ask('two'));
    await eventually(() => upstream.held.length === 2, 'two streams are upstream');
    let thirdId: string | undefined;
    const third = streamChat(gw.url, ask('three'), (chunk) => (thirdId ??= chunk.id));
    await eventually(async () => (await getJson(gw.url, '/health')).json.requests?.queued === 1, 'the third waits');
    expect((await getJson(gw.url, '/health')).json.requests).toEqual({ running: 2, queued: 1, max_running: 2, max_queued: 1 });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^conveyor_requests_queued 1$/m);

    const fourth = await postJson(gw.url, '/v1/chat/completions', ask('four'));
    expect(fourth.status).toBe(503);
    expect(fourth.headers.get('retry-after')).toBe('1');
    expect(fourth.json.error).toMatchObject({ type: 'server_error', code: 'gateway_busy', param: null });
    expect(fourth.json.error.message).toContain('2 requests at once, with 1 more waiting');
    expect(asked()).toEqual(['one', 'two']); // neither the waiting nor the refused request went upstream

    upstream.finish(upstream.held[0]!);
    expect((await first).content).toBe('answer to one');
    await eventually(() => upstream.held.length === 3, 'the third went upstream once the first ended');
    expect(asked()).toEqual(['one', 'two', 'three']);
    upstream.finish(upstream.held[1]!);
    upstream.finish(upstream.held[2]!);
    expect((await second).content).toBe('answer to two');
    expect((await third).content).toBe('answer to three');

    // The third's timeline shows its wait: admitted after it started, before its round.
    const events = (await getJson(gw.url, `/v1/requests/${thirdId}/timeline`)).json.events as TimelineEvent[];
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(['request-start', 'admitted', 'round-start']);
    expect((await getJson(gw.url, '/health')).json.requests).toMatchObject({ running: 0, queued: 0 });
    const after = await (await fetch(`${gw.url}/metrics`)).text();
    expect(after).toMatch(/^conveyor_requests_total\{outcome="gateway_busy"\} 1$/m);
    // Three were let in: two at once (0 s in line), and the third after it waited for the first.
    expect(after).toMatch(/^conveyor_request_queue_seconds_count 3$/m);
    expect(after).toMatch(/^conveyor_request_queue_seconds_bucket\{le="0"\} 2$/m);
  });

  it('gives up the place in line of a client that leaves while it waits', async () => {
    const upstream = holdingUpstream();
    const gw = await scripted.start(upstream.handler, {}, { maxConcurrentRequests: 1, maxQueuedRequests: 1 });
    const first = streamChat(gw.url, ask('one'));
    await eventually(() => upstream.held.length === 1, 'the first is upstream');
    const leaving = new AbortController();
    const gone = streamChat(gw.url, ask('gone'), undefined, leaving.signal);
    await eventually(async () => (await getJson(gw.url, '/health')).json.requests.queued === 1, 'the second waits');
    leaving.abort();
    await expect(gone).rejects.toThrow();
    await eventually(async () => (await getJson(gw.url, '/health')).json.requests.queued === 0, 'its place in line is free');

    // The line has room again, and the request that left never reaches the upstream.
    const next = streamChat(gw.url, ask('next'));
    await eventually(async () => (await getJson(gw.url, '/health')).json.requests.queued === 1, 'the next waits');
    upstream.finish(upstream.held[0]!);
    await eventually(() => upstream.held.length === 2, 'the next went upstream');
    upstream.finish(upstream.held[1]!);
    expect((await first).content).toBe('answer to one');
    expect((await next).content).toBe('answer to next');
    expect(asked()).toEqual(['one', 'next']);
  });

  it('counts a forwarded request too: /v1/completions waits in the same line and is refused beyond it', async () => {
    const upstream = holdingUpstream();
    const completions: string[] = [];
    const gw = await scripted.start(
      (req, res, body) => {
        if (req.url !== '/v1/completions') return upstream.handler(req, res, body);
        const prompt = (body as { prompt: string }).prompt;
        completions.push(prompt);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: `completed ${prompt}` }] }));
      },
      {},
      { maxConcurrentRequests: 1, maxQueuedRequests: 1 },
    );
    const chat = streamChat(gw.url, ask('one'));
    await eventually(() => upstream.held.length === 1, 'the chat holds the one place');
    const waiting = postJson(gw.url, '/v1/completions', { model: MODEL, prompt: 'two' });
    await eventually(async () => (await getJson(gw.url, '/health')).json.requests?.queued === 1, 'the completion waits');
    const refused = await postJson(gw.url, '/v1/completions', { model: MODEL, prompt: 'three' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json.error).toMatchObject({ code: 'gateway_busy' });
    expect(completions).toEqual([]); // neither went upstream while the chat held the place

    upstream.finish(upstream.held[0]!);
    expect((await chat).content).toBe('answer to one');
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.json.choices[0].text).toBe('completed two');
    expect(completions).toEqual(['two']);
    expect((await getJson(gw.url, '/health')).json.requests).toMatchObject({ running: 0, queued: 0 });
    expect(await (await fetch(`${gw.url}/metrics`)).text()).toMatch(/^conveyor_forwarded_requests_total\{status="503",error="gateway_busy"\} 1$/m);
  });

  it("is retried by the official openai client, which waits as Retry-After says", async () => {
    const upstream = holdingUpstream();
    const gw = await scripted.start(upstream.handler, {}, { maxConcurrentRequests: 1, maxQueuedRequests: 0 });
    const first = streamChat(gw.url, ask('one'));
    await eventually(() => upstream.held.length === 1, 'the first is upstream');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 2 });
    const retried = client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'retried' }] });
    // Refused once (the line holds nobody), then the place frees during the client's wait.
    await eventually(async () => (await fetch(`${gw.url}/metrics`).then((r) => r.text())).includes('conveyor_requests_total{outcome="gateway_busy"} 1'), 'the first try was refused');
    upstream.finish(upstream.held[0]!);
    await first;
    await eventually(() => upstream.held.length === 2, 'the retry went upstream');
    upstream.finish(upstream.held[1]!);
    expect((await retried).choices[0]!.message.content).toBe('answer to retried');
  });

  it('refuses at start-up a limit of 0, and a line without a limit', async () => {
    await expect(scripted.start(holdingUpstream().handler, {}, { maxConcurrentRequests: 0 })).rejects.toThrow(/maxConcurrentRequests/);
    await expect(scripted.start(holdingUpstream().handler, {}, { maxQueuedRequests: 10 })).rejects.toThrow(/maxQueuedRequests: bounds the line of maxConcurrentRequests, which is not set/);
  });

  it('defaults the line to 256 places', async () => {
    const gw = await scripted.start(holdingUpstream().handler, {}, { maxConcurrentRequests: 4 });
    expect((await getJson(gw.url, '/health')).json.requests).toEqual({ running: 0, queued: 0, max_running: 4, max_queued: 256 });
  });
});
