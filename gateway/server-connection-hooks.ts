import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestTimeoutError, UnparsableBodyError, type ConveyorError } from '../core/errors.ts';
import type { AccessLog } from './access-log.ts';
import { pathOf } from './request-path.ts';

/** The statuses Node itself answers its parser's errors with; 400 for the rest. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/** Requests whose body the server refused and answered itself (a 408 past requestMs, a 400 for a malformed chunk), by the error their answer carries. */
const refusedBodies = new WeakMap<IncomingMessage, ConveyorError>();

/**
 * Why `req`'s body stopped when the server answered it itself (RequestTimeoutError for its 408,
 * UnparsableBodyError for a malformed chunked body),
 * so that the route reading it ends with the code its client was answered with, not client_aborted;
 * undefined otherwise.
 */
export function bodyRefusal(req: IncomingMessage): ConveyorError | undefined {
  return refusedBodies.get(req);
}

/**
 * A request Node's parser refuses (headers too large, a malformed request line) never reaches the
 * handler: answered as Node answers it, and given its access line like any other.
 */
export function answerParserRefusals(server: Server, accessLog: AccessLog): void {
  // The responses each connection owes. A parser error while the body of one is still coming is
  // that request's (its body late past requestMs, or cut by the client closing its side): its own
  // line says how it ended, so a second line would count one request twice. One between requests,
  // on a kept-alive connection that answered before, is a request of its own: its bytes written
  // say nothing of that.
  const owed = new WeakMap<Socket, Set<ServerResponse>>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const responses = owed.get(socket) ?? new Set<ServerResponse>();
    owed.set(socket, responses.add(res));
    res.once('close', () => responses.delete(res));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const responses = [...(owed.get(socket) ?? [])];
    // As Node's own handler: an answer only on a socket whose response in progress (if any) has
    // sent nothing yet; not after a reset.
    if (!socket.writable || responses.some((res) => res.headersSent) || err.code === 'ECONNRESET') return void socket.destroy();
    const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? 400;
    const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const code = timedOut ? 'request_timeout' : 'unparsable_request';
    // The error is the request still being parsed: one whose body has not all come, else a next
    // one pipelined behind those owed, which never became a request (its line has no method).
    const parsing = responses.filter((res) => !res.req.complete);
    if (parsing.length === 0) accessLog.unparsed(status, code, err.code);
    for (const res of parsing) {
      // A connection the client closed mid-body (HPE_INVALID_EOF_STATE) is its leaving: client_aborted.
      if (timedOut) refusedBodies.set(res.req, new RequestTimeoutError());
      else if (err.code !== 'HPE_INVALID_EOF_STATE') refusedBodies.set(res.req, new UnparsableBodyError(status === 413 ? 413 : 400, err.code));
      accessLog.parserAnswered(res, status, code, err.code);
    }
    // In OpenAI's shape, as every other error the gateway answers: Node's own answer has no body,
    // which the SDKs report as "431 status code (no body)". Closed once written, as Node's own
    // handler does: the server allows half-open sockets, so a client that never closes its side
    // would otherwise hold this one open.
    const body = JSON.stringify({ error: { message: refusalMessage(status, err.code), type: 'invalid_request_error', param: null, code } });
    const head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
    socket.end(head + body, () => socket.destroy());
  });
}

/** What the client is told of a request Node's parser refused (its code, HPE_…, names the detail). */
function refusalMessage(status: number, parserError: string | undefined): string {
  if (status === 408) return new RequestTimeoutError().message.replace('requestMs', 'headersMs or .requestMs');
  if (status === 431) return `the request's headers are larger than the gateway takes (${parserError})`;
  return `the request could not be parsed as HTTP/1.1${parserError ? ` (${parserError})` : ''}`;
}

/**
 * `Expect: 100-continue`: a body declared over maxBodyBytes on a request that reads it whole (the
 * chat route's, a forwarded JSON body that gets upstream.model) is refused (413, by the route) before the client sends it, and the connection closes after,
 * since that body will not follow.
 */
export function answerExpectContinue(server: Server, readsBodyWhole: (path: string, req: IncomingMessage) => boolean, maxBodyBytes: number): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url ?? '/');
    if (path !== undefined && readsBodyWhole(path, req) && Number(req.headers['content-length']) > maxBodyBytes) res.shouldKeepAlive = false;
    else res.writeContinue();
    server.emit('request', req, res);
  });
}
