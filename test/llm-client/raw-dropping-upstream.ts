import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** What the server does with one request: answer it with the SSE body, or drop its connection. */
export type RequestFate = 'serve' | 'close' | 'reset';

export interface RequestSeen {
  /** 1 for the server's first connection. */
  connection: number;
  /** 0 for the first request on its connection: anything above is a reused keep-alive socket. */
  onConnection: number;
}

export interface RawDroppingUpstream {
  baseUrl: string;
  /** TCP connections accepted so far. */
  connections(): number;
  /** Every request read whole, in order. */
  readonly requests: RequestSeen[];
  close(): Promise<void>;
}

export interface RawDroppingUpstreamOptions {
  /** Drop every connection as soon as it is accepted, before reading a byte (a server crashing on accept). */
  onAccept?: 'close' | 'reset';
  /** Per request read: serve it, or drop its connection (FIN: undici's `other side closed`; RST: ECONNRESET). */
  fate?: (request: RequestSeen) => RequestFate;
  /** The SSE text a served request gets. */
  sse: string;
}

/**
 * An upstream on plain TCP (net.createServer, 127.0.0.1:0) that drops connections the way failing
 * servers do, with no HTTP library in between to soften it. Requests are framed by hand:
 * a head, then `content-length` bytes of body.
 */
export async function startRawDroppingUpstream(options: RawDroppingUpstreamOptions): Promise<RawDroppingUpstream> {
  const requests: RequestSeen[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    const connection = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset or a write after the peer left is what this server is for, not a test failure.
    socket.on('error', () => {});
    if (options.onAccept) return drop(socket, options.onAccept);
    let pending = Buffer.alloc(0);
    let onConnection = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const length = requestLength(pending);
        if (length === undefined) return;
        pending = pending.subarray(length);
        const seen = { connection, onConnection: onConnection++ };
        requests.push(seen);
        const fate = options.fate?.(seen) ?? 'close';
        if (fate !== 'serve') return drop(socket, fate);
        const body = Buffer.from(options.sse, 'utf8');
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n`);
        socket.write(body);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    connections: () => connections,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function drop(socket: Socket, how: 'close' | 'reset'): void {
  if (how === 'reset') socket.resetAndDestroy();
  else socket.destroy();
}

/** The byte length of the first whole request in `bytes`, or undefined while it is still arriving. */
function requestLength(bytes: Buffer): number | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = bytes.subarray(0, headEnd).toString('latin1');
  const contentLength = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
  const length = headEnd + 4 + contentLength;
  return bytes.length >= length ? length : undefined;
}
