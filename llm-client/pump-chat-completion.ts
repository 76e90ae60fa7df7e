import {
  parseUpstreamOptions,
  StreamChatCompletionOptionsSchema,
  StreamRequestSchema,
  UpstreamConnectionSchema,
  type StreamChatCompletionOptions,
  type StreamRequest,
  type ResolvedStreamOptions,
  type UpstreamConnectionOptions,
} from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import { startUpstreamStream, type UpstreamStream } from './upstream-stream.ts';
export type { UpstreamStream } from './upstream-stream.ts';

/**
 * Streams one chat completion from an OpenAI-compatible server, pushing each part into `onPart`
 * synchronously from the socket read that completed it: no stream object, no promise and no
 * async-iterator hop per token. This is the gateway's per-token path; `streamChatCompletion` is
 * the same stream as an async iterable.
 *
 * Options are validated here, synchronously (an `InvalidRequestError` names the bad field). The
 * request always goes out with `stream: true` and `stream_options.include_usage: true`. Aborting
 * `signal`, calling `abort`, or `onPart` throwing closes the upstream socket at once, so the
 * server stops decoding.
 */
export function pumpChatCompletion(options: StreamChatCompletionOptions, onPart: (part: UpstreamPart) => void): UpstreamStream {
  return startUpstreamStream(parseUpstreamOptions(StreamChatCompletionOptionsSchema, options), onPart);
}

/** Starts one stream to a fixed upstream; `request` is validated per call, like `pumpChatCompletion`'s options. */
export type ChatCompletionPump = (request: StreamRequest, onPart: (part: UpstreamPart) => void) => UpstreamStream;

/**
 * `pumpChatCompletion` for many streams to one upstream: the connection options (URL, key,
 * timeouts, dispatcher) are validated once, here, instead of on every request's way to its first
 * token (the URL check alone cost more than the rest of the options together).
 *
 * `requestsValidated`: the caller has checked every body already, to rules at least as strict as
 * `ChatRequestBodySchema` (the gateway's chat request schema is), so the per-stream check is skipped;
 * a body is then sent as it is given, not as a copy.
 */
export function createChatCompletionPump(connection: UpstreamConnectionOptions, options: { requestsValidated?: boolean } = {}): ChatCompletionPump {
  const resolved = parseUpstreamOptions(UpstreamConnectionSchema, connection);
  if (options.requestsValidated) return (request, onPart) => startUpstreamStream({ ...resolved, ...request } as ResolvedStreamOptions, onPart);
  return (request, onPart) => startUpstreamStream({ ...resolved, ...parseUpstreamOptions(StreamRequestSchema, request) }, onPart);
}
