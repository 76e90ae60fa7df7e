import { ClientAbortedError } from '../core/errors.ts';
import { startUpstreamStream, type UpstreamStream } from './upstream-stream.ts';
import { parseUpstreamOptions, StreamChatCompletionOptionsSchema, type ResolvedStreamOptions, type StreamChatCompletionOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
export type { StreamChatCompletionOptions, UpstreamTimeouts } from './upstream-options.ts';

/**
 * Streams one chat completion from an OpenAI-compatible server (vLLM, SGLang, llama.cpp, sim/).
 *
 * Options are validated here, synchronously (an `InvalidRequestError` names the bad field).
 * The request always goes out with `stream: true` and `stream_options.include_usage: true`.
 * Aborting `signal`, or leaving the `for await` loop early, closes the upstream socket at once,
 * so the server stops decoding; an abort surfaces as the signal's reason. Every other failure
 * is one of the typed `Upstream*Error`s from core/errors.ts.
 *
 * This is `pumpChatCompletion` (the push-based stream the gateway consumes) as an async
 * iterable: while the consumer holds a part the socket is not read and the idle clock stops.
 */
export function streamChatCompletion(options: StreamChatCompletionOptions): AsyncIterable<UpstreamPart> {
  return pullParts(parseUpstreamOptions(StreamChatCompletionOptionsSchema, options));
}

async function* pullParts(options: ResolvedStreamOptions): AsyncGenerator<UpstreamPart, void, undefined> {
  // At most the parts of one SSE event: the stream is paused as soon as one arrives.
  const queue: UpstreamPart[] = [];
  let head = 0;
  let settled = false;
  let wake: (() => void) | undefined;
  const stream: UpstreamStream = startUpstreamStream(options, (part) => {
    queue.push(part);
    stream.pause();
    wake?.();
  });
  const settle = () => {
    settled = true;
    wake?.();
  };
  stream.done.then(settle, settle);
  try {
    for (;;) {
      // Parts already decoded must not outlive an abort or expiry: this throws its reason.
      if (stream.interrupted) await stream.done;
      if (head < queue.length) {
        yield queue[head++]!;
        continue;
      }
      queue.length = 0;
      head = 0;
      if (settled) return await stream.done;
      stream.resume();
      if (queue.length > 0 || stream.interrupted) continue;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stream.abort(new ClientAbortedError());
  }
}
