import { PumpedStream } from './pumped-stream.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';

/** One chat completion being pushed, part by part, into its consumer. */
export interface UpstreamStream {
  /**
   * Settles once the stream is over: resolves after the `end` part was delivered; rejects with a
   * typed `Upstream*Error`, with the caller's abort reason, or with what `onPart` threw.
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

/** Starts one stream with options validated already (`pumpChatCompletion`, `streamChatCompletion`). */
export function startUpstreamStream(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void): UpstreamStream {
  const stream = new PumpedStream(options, onPart);
  stream.start();
  return stream;
}
