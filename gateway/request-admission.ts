import type { ServerResponse } from 'node:http';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ClientAbortedError } from '../core/errors.ts';

/**
 * One of maxConcurrentRequests places (at once when there is no limit): the release function, once
 * the request has it. A client that leaves while it waits gives its place in line up; one more than
 * the line holds is refused with the queue's error (GatewayBusyError). `waited` runs when the
 * request had to wait, once it is in.
 */
export async function admitted(queue: BoundedQueue | undefined, res: ServerResponse, waited?: () => void): Promise<() => void> {
  if (!queue) return () => {};
  const now = queue.tryAcquire();
  if (now) return now;
  const left = new AbortController();
  const onClose = () => left.abort(new ClientAbortedError());
  res.once('close', onClose);
  try {
    const release = await queue.acquire(left.signal);
    waited?.();
    return release;
  } finally {
    res.off('close', onClose);
  }
}
