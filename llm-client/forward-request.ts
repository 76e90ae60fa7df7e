import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ForwardHandler } from './forward-handler.ts';
import { isStaleConnectionFailure } from './upstream-failure.ts';
import { ListModelsOptionsSchema, parseUpstreamOptions, type ListModelsOptions, type ResolvedListModelsOptions } from './upstream-options.ts';

/** One request to pass to the upstream as it is: any method, any endpoint below the base URL. */
export interface ForwardedRequest {
  method: string;
  /** The path below the base URL, e.g. `/completions` for `{baseUrl}/completions`. */
  endpoint: string;
  /**
   * `endpoint` is beside the base URL's `/v1`, at the server root (vLLM's and llama.cpp's
   * `/tokenize`, `/detokenize`): the base URL must end in `/v1` (serverRootPath).
   */
  besideV1?: boolean;
  /** The query string without its `?`; '' for none. */
  query: string;
  /** End-to-end headers only: the caller has dropped hop-by-hop ones, `host` and the client's `authorization`. */
  headers: Record<string, string | string[]>;
  body: Readable | Buffer | null;
  /** Cancels the request at any point: the upstream socket is destroyed, which stops its decode. */
  signal: AbortSignal;
  /**
   * The answer comes whole, its headers with it (a JSON body without `stream: true`): the upstream
   * generates all of it first, so its headers may wait WHOLE_ANSWER_HEADERS_MS (forward-handler.ts), not a stream's
   * first-token wait.
   */
  answersWhole?: boolean;
  /**
   * When the request's first attempt started (performance.now()): `totalMs` counts from it, so a
   * replica tried after another failed gets what is left. This attempt's start when absent.
   */
  startedAt?: number;
}

/** Where the answer goes, as it arrives. */
export interface ForwardSink {
  /** The upstream's status and headers (names lower-cased; a repeated header as a list). */
  head(statusCode: number, headers: Record<string, string | string[]>): void;
  /** One read of the body, in order; false asks for no more until the exchange's `resume()`. */
  body(chunk: Buffer): boolean;
}

export interface ForwardedExchange {
  /**
   * Resolves once the whole answer has gone to the sink. Rejects with a typed `Upstream*Error`
   * (a network failure or timeout: before `head`, nothing reached the sink; `totalMs` running out
   * rejects with UpstreamTotalTimeoutError, whatever else failed with it), with the signal's
   * reason, with what the sink threw, or with a `ShuttingDownError` when the connection pools
   * were closed under it (`closeUpstreamPools`).
   */
  readonly done: Promise<void>;
  /** The sink can take more after its `body` returned false. */
  resume(): void;
}

/**
 * Sends one request upstream unchanged but for the upstream's own key, and hands its answer,
 * whatever the status, to `sink` as it arrives: the bytes are not parsed. Connect and headers
 * timeouts are a chat stream's (generationHeadersMs; longer for an answer that comes whole,
 * `answersWhole`); between body reads it allows the longer of
 * `firstTokenMs` and `idleMs`, since an upstream may send its headers before a long prefill.
 * `totalMs` bounds the whole exchange, from `request.startedAt`, as it does a chat stream
 * (stream-deadlines.ts): what came in time while the event loop was blocked is read first.
 *
 * It is undici's dispatch handler itself, as the chat stream is (pumped-stream.ts), and its
 * reads after the first go out in first-token-first's passes, so a forwarded stream costs the
 * process about what a chat stream does and does not hold up other streams' first tokens.
 */
export function forwardRequest(connection: ForwardConnection, given: ForwardedRequest, sink: ForwardSink): ForwardedExchange {
  // The retry below runs on the same total.
  const request = given.startedAt === undefined ? { ...given, startedAt: performance.now() } : given;
  let exchange = new ForwardHandler(connection, request, sink);
  exchange.start();
  // A pooled keep-alive socket the server had closed already: sent once more on a new connection,
  // as a chat stream is (keep-alive-retry-stream.ts), when the body can be sent again.
  const replayable = request.body === null || Buffer.isBuffer(request.body);
  const done = exchange.done.catch((error: unknown) => {
    if (!replayable || exchange.responded || request.signal.aborted || !isStaleConnectionFailure(error, exchange)) throw error;
    exchange = new ForwardHandler(connection, request, sink);
    exchange.start();
    return exchange.done;
  });
  return { done, resume: () => exchange.resume() };
}

/** An upstream's connection options, checked once (the URL's check costs more than a forwarded request's own work). */
export type ForwardConnection = ResolvedListModelsOptions & { readonly checked: true };

export function forwardConnection(options: ListModelsOptions): ForwardConnection {
  return { ...parseUpstreamOptions(ListModelsOptionsSchema, options), checked: true };
}

