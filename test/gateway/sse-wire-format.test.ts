import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { pause, sseHeaders, startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { streamChat } from '../support/sse-client.ts';

interface RawResponse {
  head: string;
  /** The body's chunks, each checked against its size line. */
  chunks: string[];
}

/**
 * Reads `count` HTTP/1.1 responses off one socket and decodes their chunked bodies by hand, so a
 * size line that does not match its bytes, or bytes between responses, fail the test.
 */
function parseResponses(raw: Buffer, count: number): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  const line = () => {
    const end = raw.indexOf('\r\n', at);
    if (end < 0) throw new Error(`truncated at byte ${at}`);
    const text = raw.subarray(at, end).toString('latin1');
    at = end + 2;
    return text;
  };
  for (let r = 0; r < count; r++) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    const head = raw.subarray(at, headEnd).toString('latin1');
    at = headEnd + 4;
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    const chunks: string[] = [];
    for (;;) {
      const sizeLine = line();
      expect(sizeLine).toMatch(/^[0-9a-f]+$/);
      const size = Number.parseInt(sizeLine, 16);
      if (size === 0) {
        expect(line()).toBe('');
        break;
      }
      chunks.push(raw.subarray(at, at + size).toString('utf8'));
      at += size;
      expect(line()).toBe('');
    }
    out.push({ head, chunks });
  }
  expect(at).toBe(raw.length);
  return out;
}

/** Sends `bodies` as pipelined requests on one connection; resolves with everything read once `count` responses ended. */
function pipelined(url: string, bodies: unknown[]): Promise<Buffer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    // Garbled framing never shows the expected endings: fail with what arrived instead of hanging.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the ${bodies.length} responses did not end as expected; received: ${Buffer.concat(received).toString('latin1').slice(-400)}`));
    }, 10_000);
    socket.on('error', reject);
    socket.on('data', (b: Buffer) => {
      received.push(b);
      const all = Buffer.concat(received);
      // Each streamed answer ends with [DONE] and the zero-size chunk.
      if (all.toString('latin1').split('data: [DONE]\n\n\r\n0\r\n\r\n').length - 1 === bodies.length) {
        clearTimeout(timer);
        socket.end();
        resolve(all);
      }
    });
    const requests = bodies.map((body) => {
      const json = JSON.stringify(body);
      return `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    });
    socket.write(requests.join(''));
  });
}

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
  let sim: SimHandle;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: { ...E2E_PROFILE, decode: { baseMs: 2, perSeqMs: 0 } } });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    await sim?.close();
  });

  const ask = (content: string, max_tokens: number) => ({ model: SIM_MODEL, stream: true, max_tokens, messages: [{ role: 'user', content }] });

  it('frames every event as one well-formed chunk, also for pipelined requests on one connection', async () => {
    const bodies = [ask('first question', 12), ask('second question', 7)];
    const responses = parseResponses(await pipelined(gateway.url, bodies), bodies.length);
    for (const [i, response] of responses.entries()) {
      // Whole SSE events per chunk, never split (tokens that waited together leave together).
      for (const chunk of response.chunks) expect(chunk).toMatch(/^(data: [^\n]*\n\n)+$/);
      const data = sseData(response.chunks);
      expect(data.at(-1)).toBe('[DONE]');
      // The same answer as a plain client gets for the same request on its own connection.
      const alone = await streamChat(gateway.url, bodies[i] as Record<string, unknown>);
      expect(contentOf(data)).toBe(alone.content);
      expect(alone.content.length).toBeGreaterThan(0);
    }
  });

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
