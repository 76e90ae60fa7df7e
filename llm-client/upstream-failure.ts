import { performance } from 'node:perf_hooks';
import {
  ClientAbortedError,
  ConveyorError,
  ShuttingDownError,
  UpstreamConnectionError,
  UpstreamConnectTimeoutError,
  UpstreamHeadersTimeoutError,
  UpstreamIdleTimeoutError,
} from '../core/errors.ts';
import type { SocketReuse } from './reused-sockets.ts';
import type { UpstreamTimeouts } from './upstream-options.ts';

/** What a caller's abort surfaces as: its own reason, so the caller recognises its own cancel. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ClientAbortedError();
}

/** Maps what undici and the network throw onto the typed upstream errors. */
export function toUpstreamError(error: unknown, context: { baseUrl: string; timeouts: UpstreamTimeouts }): unknown {
  if (error instanceof ConveyorError) return error;
  const code = errorCode(error);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamConnectTimeoutError(context.timeouts.connectMs, context.baseUrl);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamHeadersTimeoutError(context.timeouts.headersMs);
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamIdleTimeoutError(context.timeouts.idleMs);
    // This process closed the pool under the request (closeUpstreamPools at shutdown): the
    // upstream did nothing wrong, so this must not read as its failure, rest it or fail over.
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return new ShuttingDownError('the connections to the upstream were closed before this request finished: the gateway is shutting down');
  }
  const message = error instanceof Error ? error.message : String(error);
  // undici's and the OS's messages name the address (connect ECONNREFUSED 10.0.0.7:8000): the
  // client is told the failure's code, the log (replica resting, its reason) keeps the rest.
  const clientMessage = `the connection to the upstream failed${typeof code === 'string' ? ` (${code})` : ''}`;
  return new UpstreamConnectionError(`upstream ${context.baseUrl} failed: ${message}`, { cause: error, clientMessage });
}

/**
 * How soon after the request was written a stale socket's close shows. The server closed that
 * connection before our request reached it, so its FIN or RST is there within a round trip; the
 * allowance is for a busy event loop. Later, the server had the request and worked on it: llama.cpp
 * sends its status line with the first token, so a reset after a long prefill comes before any
 * status line too, and sending that request again would run the prefill twice.
 */
export const STALE_CLOSE_WINDOW_MS = 1000;

/**
 * A pooled keep-alive socket closed or reset under a request the server never answered, within
 * STALE_CLOSE_WINDOW_MS of writing it: the server had already closed that connection (its idle
 * timeout raced our request), undici's `other side closed`. It says nothing of the server's health;
 * a request on a new connection answers the question. On a socket opened for the request
 * (`socketReused` not true) the same failure is the server's own: one that crashes on accept or
 * drops every request, which a new connection would only meet again. A refused connection is not
 * this either: that server is not listening.
 */
export function isStaleConnectionFailure(error: unknown, request: SocketReuse): boolean {
  if (request.socketReused !== true || !(error instanceof UpstreamConnectionError)) return false;
  if (request.writtenAt === undefined || performance.now() - request.writtenAt > STALE_CLOSE_WINDOW_MS) return false;
  const code = errorCode(error.cause);
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}
