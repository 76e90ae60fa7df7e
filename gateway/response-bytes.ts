import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What one request and its response moved over their connection, head included (nginx's $request_length and $bytes_sent). */
export interface ByteCounts {
  /** Status line, headers and body (with its chunk framing) the response wrote to the connection. */
  sent: number;
  /** Request line, headers and body read off the connection by the time the response closed. */
  received: number;
}

interface Counting {
  /** The connection the request came on, taken as it came (see countResponseBytes). */
  connection: Socket;
  socket: Socket | undefined;
  /** The connection's bytesWritten when the response took it (a pipelined one waits its turn). */
  start: number;
  sent: number | undefined;
  counts: ByteCounts | undefined;
}

const counting = new WeakMap<ServerResponse, Counting>();
/** Per connection, the bytes read that earlier requests on it were given: what is read past them is the next one's. */
const readBefore = new WeakMap<Socket, number>();

/**
 * Counts each response's bytes from its connection's own counters, per response rather than per
 * socket: a kept-alive connection carries several, one after the other (a pipelined response
 * writes nothing before the one ahead of it has finished). Registered ahead of the request
 * handler, so that nothing the handler writes at once escapes it.
 */
export function countResponseBytes(server: Server): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    // Taken now: by the response's close, Node may have let go of it (req.socket is then null).
    const connection = req.socket;
    const state: Counting = { connection, socket: undefined, start: 0, sent: undefined, counts: undefined };
    counting.set(res, state);
    const took = (socket: Socket): void => {
      state.socket = socket;
      state.start = socket.bytesWritten;
    };
    if (res.socket) took(res.socket);
    else res.once('socket', took);
    // Its last byte handed to the connection, before the next pipelined response takes it (on finish).
    res.once('prefinish', () => {
      if (state.socket) state.sent = state.socket.bytesWritten - state.start;
    });
    res.once('close', () => {
      const socket = connection;
      const read = socket.bytesRead;
      const sent = state.sent ?? (state.socket ? state.socket.bytesWritten - state.start : 0);
      state.counts = { sent, received: read - (readBefore.get(socket) ?? 0) };
      readBefore.set(socket, read);
      // The rest of a body the gateway did not read, drained after its answer, is no later request's.
      if (!req.complete && !req.destroyed) req.once('end', () => readBefore.set(socket, socket.bytesRead));
    });
  });
}

/**
 * The connection `res`'s request came on. `res.req.socket` is not it for long: a request body
 * handed to undici (a forwarded upload) has its socket set to null once undici is done with it.
 */
export function connectionOf(res: ServerResponse): Socket | undefined {
  return counting.get(res)?.connection ?? res.req.socket ?? undefined;
}

/** `res`'s counts, once it has closed; undefined before, or on a server that does not count. */
export function bytesOf(res: ServerResponse): ByteCounts | undefined {
  return counting.get(res)?.counts;
}
