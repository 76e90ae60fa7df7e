import {
  ClientAbortedError,
  ConveyorError,
  UpstreamConnectionError,
  UpstreamConnectTimeoutError,
  UpstreamHeadersTimeoutError,
  UpstreamIdleTimeoutError,
} from '../core/errors.ts';
import type { UpstreamTimeouts } from './upstream-options.ts';

/** What a caller's abort surfaces as: its own reason, so the caller recognises its own cancel. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ClientAbortedError();
}

/** Maps what undici and the network throw onto the typed upstream errors. */
export function toUpstreamError(error: unknown, context: { baseUrl: string; timeouts: UpstreamTimeouts }): unknown {
  if (error instanceof ConveyorError) return error;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamConnectTimeoutError(context.timeouts.connectMs, context.baseUrl);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamHeadersTimeoutError(context.timeouts.headersMs);
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamIdleTimeoutError(context.timeouts.idleMs);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamConnectionError(`upstream ${context.baseUrl} failed: ${message}`, { cause: error });
}
