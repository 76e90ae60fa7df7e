import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { toUpstreamError } from './upstream-failure.ts';
import { ListModelsOptionsSchema, parseUpstreamOptions, type ListModelsOptions } from './upstream-options.ts';
import { upstreamTarget } from './upstream-target.ts';

/** One request to pass to the upstream as it is: any method, any endpoint below the base URL. */
export interface ForwardedRequest {
  method: string;
  /** The path below the base URL, e.g. `/completions` for `{baseUrl}/completions`. */
  endpoint: string;
  /** The query string without its `?`; '' for none. */
  query: string;
  /** End-to-end headers only: the caller has dropped hop-by-hop ones, `host` and the client's `authorization`. */
  headers: Record<string, string | string[]>;
  body: Readable | Buffer | null;
  /** Cancels the request at any point: the upstream socket is destroyed, which stops its decode. */
  signal: AbortSignal;
}

export interface ForwardedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The upstream's body bytes, unparsed (undici's body stream). */
  body: Readable;
}

/**
 * Sends one request upstream unchanged but for the upstream's own key, and gives back its answer
 * unread: whatever the status, the caller passes it on. Connect and headers timeouts are the
 * stream's; between body reads it allows the longer of `firstTokenMs` and `idleMs`, since an
 * upstream may send its headers before a long prefill. Network failures and timeouts reject with
 * the typed `Upstream*Error`s; the caller's abort rejects with undici's abort error.
 */
export async function forwardRequest(connection: ListModelsOptions, request: ForwardedRequest): Promise<ForwardedResponse> {
  const resolved = parseUpstreamOptions(ListModelsOptionsSchema, connection);
  const { timeouts, baseUrl } = resolved;
  const target = upstreamTarget(resolved, request.endpoint, request.query);
  try {
    const response: Dispatcher.ResponseData = await target.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: request.method as Dispatcher.HttpMethod,
      headers: { ...request.headers, ...target.headers },
      body: request.body,
      signal: request.signal,
      headersTimeout: timeouts.headersMs,
      bodyTimeout: Math.max(timeouts.firstTokenMs, timeouts.idleMs),
    });
    return { statusCode: response.statusCode, headers: response.headers, body: response.body };
  } catch (error) {
    if (request.signal.aborted) throw error;
    throw toUpstreamError(error, { baseUrl, timeouts });
  }
}
