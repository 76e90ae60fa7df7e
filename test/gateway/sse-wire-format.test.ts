import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { pause, sseHeaders, startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { SIM_MODEL } from '../support/e2e-profile.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';
import { parseResponses, pipelined } from '../support/raw-http.ts';
import { streamChat } from '../support/sse-client.ts';

const sseData = (chunks: string[]) =>
  chunks
    .join('')
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length));
const contentOf = (data: string[]) =>
  data
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> })
    .flatMap((c) => c.choices.map((ch) => ch.delta.content ?? ''))
    .join('');

describe('SSE on the wire (HTTP/1.1 chunked framing written by the gateway)', () => {
  const pair = fastSimGateway();

  const ask = (content: string, max_tokens: number) => ({ model: SIM_MODEL, stream: true, max_tokens, messages: [{ role: 'user', content }] });

  it('frames every event as one well-formed chunk, also for pipelined requests on one connection', async () => {
    const bodies = [ask('first question', 12), ask('second question', 7)];
    const responses = parseResponses(await pipelined(pair.gateway.url, bodies), bodies.length);
    for (const [i, response] of responses.entries()) {
      // Whole SSE events per chunk, never split (tokens that waited together leave together).
      for (const chunk of response.chunks) expect(chunk).toMatch(/^(data: [^\n]*\n\n)+$/);
      const data = sseData(response.chunks);
      expect(data.at(-1)).toBe('[DONE]');
      // The same answer as a plain client gets for the same request on its own connection.
      const alone = await streamChat(pair.gateway.url, bodies[i] as Record<string, unknown>);
      expect(contentOf(data)).toBe(alone.content);
      expect(alone.content.length).toBeGreaterThan(0);
    }
  });

  it("closes the connection after the stream when the client asked for Connection: close", async () => {
    const { hostname, port } = new URL(pair.gateway.url);
    const socket = connect(Number(port), hostname);
    const json = JSON.stringify(ask('one question', 5));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    const received: Buffer[] = [];
    socket.on('data', (b: Buffer) => received.push(b));
    // The server's end of the connection, not an idle timeout's: the test fails on its own timeout otherwise.
    await new Promise<void>((resolve, reject) => socket.on('end', resolve).on('error', reject));
    socket.destroy();
    const [response] = parseResponses(Buffer.concat(received), 1);
    expect(response!.head.toLowerCase()).toContain('\r\nconnection: close');
    expect(sseData(response!.chunks).at(-1)).toBe('[DONE]');
  }, 3_000);

  it('sends tokens that reached the gateway together in one chunk, each a whole event, in order', async () => {
    const upstream = await startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      await pause(10);
      res.write(vllmChunk({ content: 't0 ' }));
      await pause(20);
      // Five tokens in one read, as when the gateway is a decode step or more behind.
      res.write([1, 2, 3, 4, 5].map((i) => vllmChunk({ content: `t${i} ` })).join(''));
      await pause(20);
      res.end(vllmChunk({ content: '' }, 'stop') + DONE);
    });
    const behind = await startGateway({ port: 0, upstream: { baseUrl: upstream.baseUrl } }, { tools: new Map() });
    try {
      const [response] = parseResponses(await pipelined(behind.url, [{ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }]), 1);
      const tokens = response!.chunks.map((chunk) => contentOf(sseData([chunk])));
      expect(tokens).toContain('t1 t2 t3 t4 t5 ');
      expect(contentOf(sseData(response!.chunks))).toBe('t0 t1 t2 t3 t4 t5 ');
      // t0 was the stream's only token in its read: a chunk of its own.
      expect(tokens).toContain('t0 ');
    } finally {
      await behind.close();
      await upstream.close();
    }
  });
});
