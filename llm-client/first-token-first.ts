/**
 * "First tokens first": the order in which a process hands out the parts its upstream streams
 * read in one turn of the event loop.
 *
 * A continuous-batching server ends each decode step by writing one chunk to every running
 * stream, oldest first, so a new stream's first token is the last chunk of its step to arrive. A
 * gateway that turned every chunk into a client write as it was read would put the whole step's
 * work (parse, route, serialise, write: tens of microseconds a chunk) ahead of that first token,
 * and time to first token would grow with the number of streams in flight. Instead, a stream that
 * has produced its first token hands its later parts here; they go out in one pass right after
 * the I/O phase (setImmediate), in the order they were read, while first tokens and new requests
 * read in the same phase are served at once. Inter-token latency pays at most the rest of that
 * phase; nothing is reordered within a stream.
 */
export interface DeferredDrain {
  /** Hands over what was deferred, in order. */
  drainDeferred(): void;
}

const queue: DeferredDrain[] = [];
let scheduled = false;

/**
 * Runs `stream.drainDeferred()` after the current I/O phase. The caller queues a stream at most
 * once per pass (PumpedStream keeps a flag), and its drainDeferred never throws: one stream's
 * failure settles that stream and cannot cost the others their pass.
 */
export function deferDrain(stream: DeferredDrain): void {
  queue.push(stream);
  if (scheduled) return;
  scheduled = true;
  setImmediate(runQueue);
}

function runQueue(): void {
  scheduled = false;
  // Streams deferred while this pass runs (none, unless a consumer reads a socket synchronously)
  // wait for the next pass: the loop stays bounded.
  const streams = queue.splice(0);
  for (const stream of streams) stream.drainDeferred();
}
