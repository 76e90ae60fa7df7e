import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AccessLog } from './access-log.ts';
import { pathOf } from './request-path.ts';

/** The statuses Node itself answers its parser's errors with; 400 for the rest. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, number>> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/**
 * A request Node's parser refuses (headers too large, a malformed request line) never reaches the
 * handler: answered as Node answers it, and given its access line like any other.
 */
export function answerParserRefusals(server: Server, accessLog: AccessLog): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node's own handler: an answer only on a socket that has had none of its bytes yet (not a
    // reset, not an error in the middle of a response, which has its line already).
    if (!socket.writable || socket.bytesWritten > 0 || err.code === 'ECONNRESET') return void socket.destroy();
    const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? 400;
    accessLog.unparsed(status, err.code);
    // Closed once written, as Node's own handler does: the server allows half-open sockets, so a
    // client that never closes its side would otherwise hold this one open.
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`, () => socket.destroy());
  });
}

/**
 * `Expect: 100-continue`: a body declared over maxBodyBytes on a path that reads it whole (the chat
 * route) is refused (413, by the route) before the client sends it, and the connection closes after,
 * since that body will not follow.
 */
export function answerExpectContinue(server: Server, readsBodyWhole: (path: string) => boolean, maxBodyBytes: number): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req.url ?? '/');
    if (path !== undefined && readsBodyWhole(path) && Number(req.headers['content-length']) > maxBodyBytes) res.shouldKeepAlive = false;
    else res.writeContinue();
    server.emit('request', req, res);
  });
}
