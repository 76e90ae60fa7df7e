import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { eventually } from '../support/conveyor-fixture.ts';

const scripted = scriptedGateway();

// Regression: the route listened for the client's leaving only once its session began. A client
// that left before, while the route asked the upstream's /v1/models for an adapter's base model
// (a name no tool-parser rule matches waits up to 2 s for it), was never seen to go: its whole
// answer was decoded upstream, and its tools run, for no one.
describe('a client that leaves before its session begins', () => {
  it('gets no upstream decode once the model look-up it waited on is answered', async () => {
    let modelsAsked!: () => void;
    const asked = new Promise<void>((resolve) => (modelsAsked = resolve));
    let answerModels!: () => void;
    const modelsHeld = new Promise<void>((resolve) => (answerModels = resolve));
    const gw = await scripted.start(async (req, res) => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        modelsAsked();
        await modelsHeld;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'sql-lora', object: 'model', owned_by: 'vllm', parent: 'base-7b' }] }));
        return;
      }
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'an answer no one reads' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const body = JSON.stringify({ model: 'sql-lora', messages: [{ role: 'user', content: 'hi' }] });
    const client = request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    client.on('error', () => {});
    client.end(body);
    await asked;
    client.destroy();
    // The gateway has seen the client's socket close before the look-up is answered.
    const connections = () => new Promise<number>((resolve, reject) => gw.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await eventually(async () => (await connections()) === 0, "the gateway saw the client's socket close");
    answerModels();
    // The request ends either way, with a decode or without one; the metrics say how.
    let ended: string[] = [];
    await eventually(async () => {
      ended = (await (await fetch(`${gw.url}/metrics`)).text()).match(/^conveyor_requests_total\{outcome="[^"]+"\} 1$/gm) ?? [];
      return ended.length > 0;
    }, 'the request ended');
    expect(ended).toEqual(['conveyor_requests_total{outcome="client_aborted"} 1']);
    expect(scripted.upstream.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});
