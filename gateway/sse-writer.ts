import type { ServerResponse } from 'node:http';
import { ChunkedBodyWriter, responseBlocked } from '../core/chunked-body-writer.ts';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/**
 * Server-sent events written to the spec: multi-line payloads split into several `data:` lines,
 * no compression, `X-Accel-Buffering: no` so nginx-style proxies do not hold tokens back, and
 * comment keep-alives while the model prefills or a tool runs (idle proxies drop silent streams).
 * No `Connection` header of its own: node:http writes the one the client asked for, and a
 * `keep-alive` set here overrode a client's `Connection: close` (it waited for the idle timeout).
 *
 * The status line and headers leave in the same packet as the first event: node:http prepends
 * them to the first write, and every write of one tick leaves in one writev. Flushing them on
 * their own cost a packet, and the client a read, ahead of the first token.
 */
export class SseWriter {
  private readonly res: ServerResponse;
  private readonly body: ChunkedBodyWriter;
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;
  private batching = false;
  /** Frames written inside `group`, sent together at its end; undefined outside one. */
  private held: string | undefined;

  constructor(
    res: ServerResponse,
    headers: Record<string, string> = {},
    keepAliveMs = 15_000,
  ) {
    this.res = res;
    this.body = new ChunkedBodyWriter(res);
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    // Nothing written in this tick (a caller that opens the stream before it has an event):
    // the headers still go out now.
    process.nextTick(() => {
      if (!this.body.started && !this.closed) res.flushHeaders();
    });
    this.keepAlive = setInterval(() => this.comment('keep-alive'), keepAliveMs);
    this.keepAlive.unref();
    res.once('close', () => this.stop());
  }

  /** Writes one event whose data is `payload` (a string, or JSON-encoded otherwise). */
  data(payload: unknown): void {
    if (this.closed) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    // JSON text never holds a raw newline: one `data:` line, no split.
    if (text.indexOf('\n') === -1) return this.write(`data: ${text}\n\n`);
    let frame = '';
    for (const line of text.split('\n')) frame += `data: ${line}\n`;
    this.write(`${frame}\n`);
  }

  comment(text: string): void {
    if (this.closed) return;
    this.write(`: ${text.replaceAll('\n', ' ')}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    if (this.held) this.send(this.held);
    this.held = '';
    this.stop();
    this.res.end();
  }

  /**
   * Runs `run`; the events it writes leave in one socket write (one HTTP chunk) when it returns
   * instead of one write each. For tokens that queued up while the event loop was busy: a
   * gateway a decode step behind would otherwise spend a write syscall (the costliest part of a
   * token's way through it, and on loopback the receiver's TCP work too) on each of a stream's
   * waiting tokens, and fall further behind. Nested calls join the outer group.
   */
  group(run: () => void): void {
    if (this.held !== undefined) return run();
    this.held = '';
    try {
      run();
    } finally {
      const frames = this.held;
      this.held = undefined;
      if (frames) this.send(frames);
    }
  }

  /**
   * The events written from here to the end of this tick leave in one packet (the end of a round:
   * its last events, the finish chunk, [DONE] and the end of the body), not one write each.
   */
  batch(): void {
    const socket = this.res.socket;
    if (this.closed || this.batching || !socket) return;
    this.batching = true;
    socket.cork();
    process.nextTick(() => {
      this.batching = false;
      // res.end() has flushed and fully uncorked the socket already.
      if (!this.res.writableEnded) socket.uncork();
    });
  }

  /**
   * The client is not keeping up: the socket holds more than its high-water mark of events not
   * yet sent. The session stops reading the upstream until `onDrained`, so a slow reader costs the
   * gateway a socket buffer, not the whole answer in memory (the upstream keeps what it decodes
   * meanwhile: vLLM merges a waiting request's tokens into its next chunk).
   */
  get blocked(): boolean {
    return !this.closed && responseBlocked(this.res);
  }

  /** Calls `resume` once the events written so far have left, or the client has gone (at once when not `blocked`). */
  onDrained(resume: () => void): void {
    const socket = this.res.socket;
    if (!this.blocked || !socket) return resume();
    let called = false;
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      if (called) return;
      called = true;
      resume();
    };
    socket.on('drain', done);
    socket.on('close', done);
  }

  private write(frame: string): void {
    if (this.held !== undefined) this.held += frame;
    else this.send(frame);
  }

  /** One event (or a group's events), one socket write (ChunkedBodyWriter). */
  private send(frame: string): void {
    this.body.write(frame);
  }

  private stop(): void {
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }
}
