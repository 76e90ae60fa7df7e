import type { ServerResponse } from 'node:http';

/**
 * `clientStallMs` (nginx's `send_timeout`) for a response whose writer waits on its client's
 * drain: a client that takes nothing for that long is cut off, its response destroyed, which
 * aborts what still runs for it (the chat session, a forwarded request) as a client that left
 * does. Without it a client that never reads holds its upstream request and its admission place
 * forever: the upstream reads are paused too, so no upstream timeout runs meanwhile.
 *
 * Arm it when a write to `res` returned false; call the function it returns once the client
 * drained. It disarms itself when the response closes first.
 */
export function armClientStall(res: ServerResponse, stallMs: number, onStall?: () => void): () => void {
  const disarm = (): void => {
    clearTimeout(timer);
    res.off('close', disarm);
  };
  const timer = setTimeout(() => {
    disarm();
    onStall?.();
    res.destroy();
  }, stallMs);
  res.once('close', disarm);
  return disarm;
}
