import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UpstreamConnectionError } from '../../core/errors.ts';
import { closeUpstreamPools, createChatCompletionPump, type ChatCompletionPump, type UpstreamPart } from '../../llm-client/index.ts';
import { expectedPlainParts, MODEL, plainContentStream } from './fixtures/vllm-streams.ts';
import { startRawDroppingUpstream, type RawDroppingUpstream, type RawDroppingUpstreamOptions } from './raw-dropping-upstream.ts';
import { pause } from './upstream-test-server.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

const servers: RawDroppingUpstream[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(closeUpstreamPools);

async function upstream(options: Omit<RawDroppingUpstreamOptions, 'sse'>): Promise<RawDroppingUpstream> {
  const server = await startRawDroppingUpstream({ ...options, sse: plainContentStream });
  servers.push(server);
  return server;
}

async function run(pump: ChatCompletionPump) {
  const parts: UpstreamPart[] = [];
  const stream = pump({ body, signal: new AbortController().signal }, (part) => parts.push(part));
  const error = await stream.done.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { parts, error };
}

/** The error names the upstream, and what it did to the connection, in undici's or the kernel's words. */
function expectNamedConnectionFailure(error: unknown, baseUrl: string): void {
  expect(error).toBeInstanceOf(UpstreamConnectionError);
  const { code, message } = error as UpstreamConnectionError;
  expect(code).toBe('upstream_connection_error');
  expect(message).toContain(`upstream ${baseUrl} failed: `);
  expect(message).toMatch(/other side closed|ECONNRESET|EPIPE/);
}

/** undici hands a finished answer's socket back to its pool in a later turn of the loop. */
const backInPool = () => pause(20);

describe('a server that drops every connection (regression: a request that failed on a new connection was sent again)', () => {
  for (const how of ['close', 'reset'] as const) {
    it(`sends a request once to a server that drops each connection as it accepts it (${how})`, async () => {
      const server = await upstream({ onAccept: how });
      const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
      for (let i = 1; i <= 3; i++) {
        const { parts, error } = await run(pump);
        expectNamedConnectionFailure(error, server.baseUrl);
        expect(parts).toEqual([]);
        // One connection per request: none was retried, since none had been used before.
        expect(server.connections()).toBe(i);
      }
    });

    it(`sends a request once to a server that reads it and drops the connection (${how})`, async () => {
      const server = await upstream({ fate: () => how });
      const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
      for (let i = 1; i <= 3; i++) {
        expectNamedConnectionFailure((await run(pump)).error, server.baseUrl);
        expect(server.requests).toHaveLength(i);
        expect(server.connections()).toBe(i);
      }
      expect(server.requests.every((r) => r.onConnection === 0)).toBe(true);
    });
  }

  it('sends again only a request that failed on a reused socket, once: a server that then drops everything fails it', async () => {
    const server = await upstream({ fate: ({ connection, onConnection }) => (connection === 1 && onConnection === 0 ? 'serve' : 'close') });
    const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
    const first = await run(pump);
    expect(first.error).toBeUndefined();
    expect(first.parts).toEqual(expectedPlainParts);
    await backInPool();

    expectNamedConnectionFailure((await run(pump)).error, server.baseUrl);
    // On the pooled socket, then once on a new connection, and no more.
    expect(server.requests).toEqual([
      { connection: 1, onConnection: 0 },
      { connection: 1, onConnection: 1 },
      { connection: 2, onConnection: 0 },
    ]);
  });

  it('still saves a request that meets a stale pooled socket of a healthy server', async () => {
    // Answers the first request on each connection and drops any later one: an idle timeout that fired as the request came.
    const server = await upstream({ fate: ({ onConnection }) => (onConnection === 0 ? 'serve' : 'close') });
    const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
    expect((await run(pump)).error).toBeUndefined();
    await backInPool();
    const second = await run(pump);
    expect(second.error).toBeUndefined();
    expect(second.parts).toEqual(expectedPlainParts);
    expect(server.requests).toEqual([
      { connection: 1, onConnection: 0 },
      { connection: 1, onConnection: 1 },
      { connection: 2, onConnection: 0 },
    ]);
  });
});
