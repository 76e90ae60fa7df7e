/**
 * "First tokens first": the order in which a process hands out the parts its upstream streams
 * read in one turn of the event loop.
 *
 * A continuous-batching server ends each decode step by writing one chunk to every running
 * stream, oldest first, so a new stream's first token is the last chunk of its step to arrive. A
 * gateway that turned every chunk into a client write as it was read would put the whole step's
 * work (parse, route, serialise, write: tens of microseconds a chunk) ahead of that first token,
 * and time to first token would grow with the number of streams in flight. Instead, a stream that
 * has produced its first token hands its later reads here, still undecoded; they are decoded and
 * go out in one pass right after the I/O phase (setImmediate), in the order they were read, while
 * first tokens and new requests read in the same phase are served at once. Inter-token latency
 * pays at most the rest of that phase; nothing is reordered within a stream.
 */
import { performance } from 'node:perf_hooks';

export interface DeferredDrain {
  /** Hands over what was deferred, in order. */
  drainDeferred(): void;
}

const queue: DeferredDrain[] = [];
let scheduled = false;
/** Upstream requests handed to undici and not yet written (see requestDispatched). */
let awaitingWrite = 0;
/** This pass already stepped aside for them once. */
let yielded = false;
/**
 * One pass hands out at most this much work before it yields to the event loop: a request or a
 * first token read meanwhile waits at most this long, not for a whole decode step's chunks
 * (about 3.5 ms for 100 streams here), which could push a new request past the model server's
 * next step boundary and cost it a whole step.
 */
const SLICE_MS = 0.5;

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

/**
 * An upstream request was handed to undici; call the returned function once when undici writes
 * it (onConnect) or the request ends first. undici writes a request on a reused keep-alive socket
 * from a setImmediate of its own (it checks first that the idle socket was not closed under it),
 * queued behind a pass that was already scheduled in this turn: until it is written, a pass
 * steps aside for one turn, so that new request goes out first instead of after up to a
 * whole slice of other streams' tokens.
 */
export function requestDispatched(): () => void {
  awaitingWrite += 1;
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    awaitingWrite -= 1;
  };
}

function runQueue(): void {
  if (awaitingWrite > 0 && !yielded) {
    yielded = true;
    setImmediate(runQueue);
    return;
  }
  yielded = false;
  const until = performance.now() + SLICE_MS;
  let done = 0;
  while (done < queue.length) {
    queue[done++]!.drainDeferred();
    if (performance.now() >= until) break;
  }
  queue.splice(0, done);
  // What is left (or was queued meanwhile) goes in the next turn of the loop, after its I/O.
  scheduled = queue.length > 0;
  if (scheduled) setImmediate(runQueue);
}
