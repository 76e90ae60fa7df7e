import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { vllmChunk } from './fixtures/vllm-streams.ts';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>;

export interface TestUpstream {
  /** e.g. http://127.0.0.1:40123/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Resolves when the socket that carried request `index` has closed. */
  requestSocketClosed(index?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1:0 that plays a scripted upstream. With `modelList`, it answers
 * `GET …/models` itself, as vLLM does, with no model: neither recorded nor handed to `handler`
 * (the gateway asks it for a model name no tool-parser rule matches, gateway/model-parents.ts).
 */
export async function startTestUpstream(handler: UpstreamHandler, options: { modelList?: boolean } = {}): Promise<TestUpstream> {
  const requests: RecordedRequest[] = [];
  const requestSockets: Socket[] = [];
  const closedSockets = new WeakMap<Socket, Promise<void>>();
  let connections = 0;
  const server = createServer((req, res) => {
    if (options.modelList && req.method === 'GET' && req.url?.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[]}');
      return;
    }
    requestSockets.push(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? JSON.parse(text) : undefined;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      Promise.resolve(handler(req, res, body)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    // Not events.once: it rejects on the 'error' a reset socket emits before it closes (a client that
    // aborts mid-stream makes this server's next write fail with ECONNRESET), unhandled until awaited.
    closedSockets.set(socket, new Promise<void>((resolve) => socket.once('close', () => resolve())));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    connections: () => connections,
    requestSocketClosed: async (index = 0) => {
      while (requestSockets[index] === undefined) await new Promise((r) => setTimeout(r, 5));
      await closedSockets.get(requestSockets[index]);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An upstream that answers every request with `stream` (SSE text), written in the given pieces. */
export function startSseUpstream(stream: string, cuts: number[] = []): Promise<TestUpstream> {
  return startTestUpstream(async (_req, res) => {
    sseHeaders(res);
    await writeInPieces(res, Buffer.from(stream, 'utf8'), cuts);
    res.end();
  });
}

/** An upstream that decodes forever, one token every 10 ms, until its client goes away. */
export function startEndlessUpstream(): Promise<TestUpstream> {
  return startTestUpstream(
    async (_req, res) => {
      sseHeaders(res);
      for (let i = 0; !res.destroyed && !res.socket?.destroyed; i++) {
        res.write(vllmChunk({ content: `t${i} ` }));
        await pause(10);
      }
    },
    { modelList: true },
  );
}

export function sseHeaders(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Writes `bytes` in the given pieces, pausing between writes so they reach the client as separate reads. */
export async function writeInPieces(res: ServerResponse, bytes: Buffer, cuts: number[]): Promise<void> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut <= from) continue;
    res.write(bytes.subarray(from, cut));
    from = cut;
    await pause(5);
  }
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Collects every part, or the error the stream ended with. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<{ parts: T[]; error?: unknown }> {
  const parts: T[] = [];
  try {
    for await (const part of stream) parts.push(part);
    return { parts };
  } catch (error) {
    return { parts, error };
  }
}
