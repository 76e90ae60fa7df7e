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
import { startFailoverStream } from './failover-stream.ts';
import { UpstreamReplicas, type ReplicaHealthEvent } from './upstream-replicas.ts';
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
export interface ChatCompletionPump {
  (request: StreamRequest, onPart: (part: UpstreamPart) => void): UpstreamStream;
  /** Present when the upstream has several replicas: their load and health (`/health`). */
  readonly replicas?: UpstreamReplicas;
}

/**
 * `pumpChatCompletion` for many streams to one upstream: the connection options (URL, key,
 * timeouts, dispatcher) are validated once, here, instead of on every request's way to its first
 * token (the URL check alone cost more than the rest of the options together).
 *
 * Several base URLs are replicas of one model: each stream goes to one of them, and moves to
 * another if its replica fails before its first token (upstream-replicas.ts, failover-stream.ts).
 *
 * `requestsValidated`: the caller has checked every body already, to rules at least as strict as
 * `ChatRequestBodySchema` (the gateway's chat request schema is), so the per-stream check is skipped;
 * a body is then sent as it is given, not as a copy.
 */
export function createChatCompletionPump(
  connection: UpstreamConnectionOptions,
  options: { requestsValidated?: boolean; onReplicaHealthChange?: (event: ReplicaHealthEvent) => void } = {},
): ChatCompletionPump {
  const { baseUrl, replicaRestMs, maxReplicaRestMs, model, ...rest } = parseUpstreamOptions(UpstreamConnectionSchema, connection);
  const check = options.requestsValidated
    ? (request: StreamRequest) => request
    : (request: StreamRequest) => parseUpstreamOptions(StreamRequestSchema, request) as StreamRequest;
  if (typeof baseUrl === 'string' || baseUrl.length === 1) {
    const resolved = { ...rest, baseUrl: typeof baseUrl === 'string' ? baseUrl : baseUrl[0]! };
    return (request, onPart) => startUpstreamStream({ ...resolved, ...check(request) } as ResolvedStreamOptions, onPart);
  }
  const replicas = new UpstreamReplicas(baseUrl, { restMs: replicaRestMs, maxRestMs: maxReplicaRestMs, onHealthChange: options.onReplicaHealthChange });
  const pump = (request: StreamRequest, onPart: (part: UpstreamPart) => void) => {
    const checked = check(request);
    const target = { replicas, affinity: checked.affinity, modelNamedByGateway: Boolean(model) };
    return startFailoverStream(target, { ...rest, ...checked, baseUrl: baseUrl[0]! } as ResolvedStreamOptions, onPart);
  };
  return Object.assign(pump, { replicas });
}
