import type { ServerResponse } from 'node:http';

/**
 * A streamed response body written one HTTP/1.1 chunk per call, used by the gateway's SSE writer
 * and the simulator's: both write a small chunk per token to many responses at once.
 *
 * The first write goes through node:http, which sends the status line and headers with it. After
 * it, each call goes to the socket already framed as one chunk (the same bytes node:http writes)
 * instead of through ServerResponse.write, which queues the size line, the data and the CRLF
 * separately, corks the socket and flushes them as a writev on the next tick: on every token's
 * path that cost ~7% of the gateway's CPU (bench/overhead) and as much of the simulator's.
 * Only while node:http has chosen chunked encoding and the socket is this response's own
 * (`res.socket` is set only for the response whose turn it is on a keep-alive connection); the
 * socket keeps the order of both kinds of write.
 */
export class ChunkedBodyWriter {
  readonly #res: ServerResponse;
  #started = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** Some body has been written (the head went out with it). */
  get started(): boolean {
    return this.#started;
  }

  /** Writes one chunk; false when the socket's buffer is full (wait for its `drain` to write more). */
  write(data: string | Uint8Array): boolean {
    const socket = this.#res.socket;
    if (this.#started && this.#res.chunkedEncoding && socket?.writable) {
      // Framed, nothing is a chunk of size 0: the body's end (RFC 9112 §7.1). node:http sends nothing for it.
      if ((typeof data === 'string' ? data.length : data.byteLength) === 0) return !responseBlocked(this.#res);
      if (typeof data === 'string') return socket.write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`);
      return socket.write(Buffer.concat([Buffer.from(`${data.byteLength.toString(16)}\r\n`, 'latin1'), data, CRLF]));
    }
    this.#started = true;
    return this.#res.write(data);
  }
}

const CRLF = Buffer.from('\r\n', 'latin1');

/**
 * The response's socket holds more than its high-water mark of data not yet sent: the client is
 * not keeping up, and the writer should wait for the socket's `drain`. Both kinds of write
 * (node:http's first, ChunkedBodyWriter's straight to the socket after it) fill the socket itself.
 */
export function responseBlocked(res: ServerResponse): boolean {
  const socket = res.socket;
  return res.writableNeedDrain || (socket !== null && socket.writableNeedDrain);
}
