import { subscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

/**
 * A request that learns, when undici writes it, whether its socket had carried a request before:
 * a pooled keep-alive connection, which the server may have closed on its idle clock while the
 * request was on its way, as against a connection opened for this request, whose failure is the
 * server's own (keep-alive-retry-stream.ts).
 */
export interface SocketReuse {
  /** Undefined until undici writes the request, and for a dispatcher that does not report its sockets. */
  socketReused: boolean | undefined;
  /** When undici wrote the request (performance.now()); undefined until then. */
  writtenAt?: number | undefined;
}

/** Sockets that have carried a request. Weak: a closed socket leaves with its pool's last reference. */
const usedSockets = new WeakSet<object>();
/** The request whose onConnect ran last: undici reports its socket next. */
let awaiting: SocketReuse | undefined;

/*
 * undici never hands a dispatch handler its socket, but publishes it on this diagnostics channel
 * for every request it writes, in the same synchronous call as the handler's onConnect, right
 * after it (writeH1, writeH2). Channels are shared by name, so this also sees the requests of
 * Node's bundled undici (fetch): they mark their sockets, and only a request that called
 * `awaitSocket` is told anything.
 */
subscribe('undici:client:sendHeaders', (message) => {
  const { socket } = message as { socket: object };
  const reused = usedSockets.has(socket);
  if (!reused) usedSockets.add(socket);
  if (awaiting === undefined) return;
  awaiting.socketReused = reused;
  awaiting.writtenAt = performance.now();
  awaiting = undefined;
});

/** Call from onConnect, as undici is about to write `request`: sets its `socketReused`. */
export function awaitSocket(request: SocketReuse): void {
  awaiting = request;
}
