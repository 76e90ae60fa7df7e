import { KeepAliveRetryStream } from './keep-alive-retry-stream.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';

/** One chat completion being pushed, part by part, into its consumer. */
export interface UpstreamStream {
  /**
   * Settles once the stream is over: resolves after the `end` part was delivered; rejects with a
   * typed `Upstream*Error`, with the caller's abort reason, with what `onPart` threw, or with a
   * `ShuttingDownError` when the connection pools were closed under it (`closeUpstreamPools`).
   */
  readonly done: Promise<void>;
  /** Cut short by an abort (the caller's signal, `abort`, or a deadline): no part follows. */
  readonly interrupted: boolean;
  /** Cuts the decode short: the upstream socket closes at once and `done` rejects with `reason`. */
  abort(reason: unknown): void;
  /** Flow control for a consumer that cannot take parts now: the socket is not read and the idle clock stops. */
  pause(): void;
  resume(): void;
}

/**
 * Starts one stream with options validated already (`pumpChatCompletion`, `streamChatCompletion`).
 * `requestStartedAt` (performance.now()): when the request's first attempt started, for a failover's
 * later attempts, which the total deadline counts from (stream-deadlines.ts).
 */
export function startUpstreamStream(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void, requestStartedAt?: number): UpstreamStream {
  const stream = new KeepAliveRetryStream(options, onPart, requestStartedAt);
  stream.start();
  return stream;
}
