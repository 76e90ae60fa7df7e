import type { ServerResponse } from 'node:http';
import { responseBlocked } from '../core/chunked-body-writer.ts';
import type { TokenEvent } from './sequence.ts';

/**
 * A stream's tokens for a client that reads slower than the engine decodes, as vLLM's
 * RequestOutputCollector has them: while the response's socket is full the engine keeps
 * decoding, and the tokens it makes meanwhile are merged into one delta (their text joined, the
 * last one's counts and finish reason, every token's id), written as one chunk once the socket
 * drains. Written one chunk each, they piled up in the simulator's memory instead.
 */
export function mergeWhileBlocked(res: ServerResponse, write: (event: TokenEvent) => void): (event: TokenEvent) => void {
  let pending: TokenEvent | undefined;
  let waiting = false;
  const flush = (): void => {
    waiting = false;
    const event = pending;
    pending = undefined;
    if (event) deliver(event);
  };
  const deliver = (event: TokenEvent): void => {
    write(event);
    const socket = res.socket;
    if (res.writableEnded || !socket || !responseBlocked(res)) return;
    waiting = true;
    socket.once('drain', flush);
  };
  return (event) => {
    if (!waiting) return deliver(event);
    pending = pending ? { ...event, text: pending.text + event.text, tokenIds: [...eventTokenIds(pending), event.tokenId] } : event;
  };
}

/** The token ids a (possibly merged) delta carries, in order. */
export function eventTokenIds(event: TokenEvent): readonly number[] {
  return event.tokenIds ?? [event.tokenId];
}
