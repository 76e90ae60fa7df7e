import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How long, and how many more bytes, the rest of a body the gateway did not read is taken in and
 * dropped once the answer has gone out (a 413, a 401 before the body was read), as nginx's
 * lingering close does: closing at once, with the client still sending, resets the connection,
 * and the reset can wipe the answer from the client's buffers before it reads it. Bounded, so
 * an endless chunked body does not hold the connection until the request timeout.
 */
export interface LingerLimits {
  maxBytes: number;
  maxMs: number;
}

export const LINGER_MS = 2_000;

/**
 * Once `res` has finished, a request body still arriving is drained up to `limits` and the
 * connection then closed; a body that ends within them leaves the connection to keep-alive.
 */
export function lingerOverUnreadBody(req: IncomingMessage, res: ServerResponse, limits: LingerLimits): void {
  res.once('finish', () => {
    if (req.complete || req.destroyed) return;
    // Taken now: a request stream destroyed meanwhile has its socket set to null (nodejs/node#41011).
    const socket = req.socket;
    let drained = 0;
    const close = (): void => {
      stop();
      socket.destroy();
    };
    const onData = (chunk: Buffer): void => {
      drained += chunk.length;
      if (drained > limits.maxBytes) close();
    };
    const timer = setTimeout(close, limits.maxMs);
    const stop = (): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', stop);
      req.off('close', stop);
    };
    req.on('data', onData);
    req.once('end', stop);
    req.once('close', stop);
  });
}
