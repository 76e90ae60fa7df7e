import type { ServerResponse } from 'node:http';

/**
 * Server-sent events written to the spec: multi-line payloads split into several `data:` lines,
 * no compression, `X-Accel-Buffering: no` so nginx-style proxies do not hold tokens back, and
 * comment keep-alives while the model prefills or a tool runs (idle proxies drop silent streams).
 */
export class SseWriter {
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
    keepAliveMs = 15_000,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    res.flushHeaders();
    this.keepAlive = setInterval(() => this.comment('keep-alive'), keepAliveMs);
    this.keepAlive.unref();
    res.once('close', () => this.stop());
  }

  /** Writes one event whose data is `payload` (a string, or JSON-encoded otherwise). */
  data(payload: unknown): void {
    if (this.closed) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    let frame = '';
    for (const line of text.split('\n')) frame += `data: ${line}\n`;
    this.res.write(`${frame}\n`);
  }

  comment(text: string): void {
    if (this.closed) return;
    this.res.write(`: ${text.replaceAll('\n', ' ')}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.stop();
    this.res.end();
  }

  private stop(): void {
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }
}
