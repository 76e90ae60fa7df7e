import type { ServerResponse } from 'node:http';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ClientAbortedError } from '../core/errors.ts';

/**
 * One of maxConcurrentRequests places (at once when there is no limit): the release function, once
 * the request has it. A client that leaves while it waits gives its place in line up; one more than
 * the line holds is refused with the queue's error (GatewayBusyError); a wait that `cancel` ends
 * (a shutdown's grace running out) is refused with its reason. `waited` runs when the request had
 * to wait, once it is in.
 */
export async function admitted(queue: BoundedQueue | undefined, res: ServerResponse, options: { waited?: () => void; cancel?: AbortSignal } = {}): Promise<() => void> {
  if (!queue) return () => {};
  // Gone already (while the route looked up an adapter's base model): its 'close' will not come
  // again, so it would have waited for a place, and taken one, for no one.
  if (res.closed) throw new ClientAbortedError();
  const now = queue.tryAcquire();
  if (now) return now;
  const { waited, cancel } = options;
  if (cancel?.aborted) throw cancel.reason;
  const left = new AbortController();
  const onClose = () => left.abort(new ClientAbortedError());
  const onCancel = () => left.abort(cancel!.reason);
  res.once('close', onClose);
  cancel?.addEventListener('abort', onCancel, { once: true });
  try {
    const release = await queue.acquire(left.signal);
    waited?.();
    return release;
  } finally {
    res.off('close', onClose);
    cancel?.removeEventListener('abort', onCancel);
  }
}
