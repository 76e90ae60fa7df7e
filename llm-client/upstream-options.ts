import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { InvalidRequestError } from '../core/errors.ts';
import { MAX_TIMER_MS, MAX_TIMER_MS_RULE } from '../core/max-timer-ms.ts';
import type { ReplicaAffinity } from './upstream-replicas.ts';
import { UpstreamUrlSchema, UpstreamUrlsSchema } from './upstream-url.ts';
import { openAiParam } from '../core/openai-param.ts';

// setTimeout clamps anything above 2^31-1 ms to 1 ms, which would turn a "very long" timeout
// into an immediate one.
const milliseconds = z.number().int().positive().max(MAX_TIMER_MS, `must be ${MAX_TIMER_MS_RULE}`);

/**
 * One named timeout per phase (STYLE 7). There is deliberately no default total timeout: a
 * long generation that keeps producing tokens must never be cut by a wall clock.
 */
export const UpstreamTimeoutsSchema = z
  .object({
    /** TCP (and TLS) connect. */
    connectMs: milliseconds.default(10_000),
    /**
     * Request written -> response headers. A chat stream waits at least `firstTokenMs` for them
     * (chat-completion-request.ts): llama.cpp's server sends its headers with its first token.
     */
    headersMs: milliseconds.default(60_000),
    /**
     * Request start -> first generated token (covers queueing and prefill of long prompts). Per
     * attempt: with replicas, the one a request fails over to gets the whole wait again.
     */
    firstTokenMs: milliseconds.default(120_000),
    /** Longest silence between two chunks once tokens flow. */
    idleMs: milliseconds.default(60_000),
    /** Optional deadline for the whole request, failover attempts included; off unless set. */
    totalMs: milliseconds.optional(),
  })
  .strict();

export type UpstreamTimeouts = z.output<typeof UpstreamTimeoutsSchema>;

/**
 * How long a request whose answer the model generates (a chat stream, a forwarded completion)
 * waits for the response headers. The first token cannot come before them, and llama.cpp's server
 * sends them only with its first token (it holds the status line so an error before it is a real
 * HTTP error): its queueing and prefill, which firstTokenMs is there to allow, all fall before the
 * headers. A shorter headersMs cut them short (a 504, and a replica rested, at 60 s of a 120 s wait).
 */
export function generationHeadersMs({ headersMs, firstTokenMs }: UpstreamTimeouts): number {
  return Math.max(headersMs, firstTokenMs);
}

const abortSignal = z.custom<AbortSignal>((v) => v instanceof AbortSignal, 'must be an AbortSignal');

// Duck-typed: undici's Dispatcher may come from another copy of undici (e.g. Node's bundled one).
const dispatcher = z.custom<Dispatcher>(
  (v) => typeof v === 'object' && v !== null && typeof (v as { dispatch?: unknown }).dispatch === 'function',
  'must be an undici Dispatcher',
);

const connection = {
  /** e.g. http://127.0.0.1:8000/v1 or unix:/run/vllm.sock:/v1 — the client appends /chat/completions or /models. */
  baseUrl: UpstreamUrlSchema,
  apiKey: z.string().min(1).optional(),
  signal: abortSignal,
  timeouts: UpstreamTimeoutsSchema.prefault({}),
  /** Overrides the shared per-origin keep-alive pool (tests, proxies, custom TLS). */
  dispatcher: dispatcher.optional(),
};

/**
 * The OpenAI chat-completions request, checked only as far as the client relies on it; unknown
 * fields pass through untouched. `n > 1` is refused because the parts carry no choice index.
 */
export const ChatRequestBodySchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.unknown()).min(1),
  n: z.literal(1).nullish(),
  stream_options: z.looseObject({}).nullish(),
});

/**
 * Called once, before any part, when the upstream has answered 200 with an event stream: it has
 * taken the request and tokens will follow (vLLM sends these headers before it prefills). A
 * gateway can open its own response then instead of on the way to the first token. `baseUrl` is the
 * upstream that took it: with several replicas, the one chosen, and called again for each replica
 * that takes the stream over when one that accepted it failed before its first token.
 */
const onAccepted = z.custom<(upstream: { baseUrl: string }) => void>((v) => typeof v === 'function', 'must be a function').optional();

/**
 * Wraps the hand-over of several parts at once: events that queued up while the event loop was
 * busy elsewhere (a process serving many streams falls a decode step behind). The consumer calls
 * `deliver()` exactly once, synchronously, and may send what the parts produce in one write
 * instead of one per part. Not called for a single event.
 */
const batchDelivery = z.custom<(deliver: () => void) => void>((v) => typeof v === 'function', 'must be a function').optional();

export const StreamChatCompletionOptionsSchema = z.object({ ...connection, body: ChatRequestBodySchema, onAccepted, batchDelivery });

/**
 * The connection half of the options: validated once per upstream, not per stream
 * (`createChatCompletionPump`). `baseUrl` may list several replicas of the same model.
 */
const { signal: _signal, baseUrl: _baseUrl, ...connectionOnly } = connection;
export const UpstreamConnectionSchema = z.object({
  ...connectionOnly,
  baseUrl: UpstreamUrlsSchema,
  /**
   * The model every request is sent as, when the gateway names it (its `upstream.model`, which
   * the gateway passes here whole). With replicas, a 404 model_not_found is then that replica's
   * failure: it rests and the stream moves on (failover-stream.ts). Bodies are not rewritten with it.
   */
  model: z.string().optional(),
  /** How long a replica that failed rests before it is tried again (doubles per failure in a row). */
  replicaRestMs: milliseconds.default(2_000),
  maxReplicaRestMs: milliseconds.default(30_000),
});
export type UpstreamConnectionOptions = z.input<typeof UpstreamConnectionSchema>;

/** One conversation's replica (upstream-replicas.ts): mutated by the pump, so a plain object. */
const affinity = z.custom<ReplicaAffinity>((v) => typeof v === 'object' && v !== null, 'must be an object').optional();

/** The per-stream half, with the same field paths in its errors as the whole options object. */
export const StreamRequestSchema = z.object({ body: ChatRequestBodySchema, signal: abortSignal, onAccepted, batchDelivery, affinity });
export type StreamRequest = {
  body: Record<string, unknown>;
  signal: AbortSignal;
  onAccepted?: (upstream: { baseUrl: string }) => void;
  batchDelivery?: (deliver: () => void) => void;
  /**
   * The conversation this stream continues, when the upstream has several replicas: its rounds
   * return to the replica that holds its prefix in cache. Ignored with a single upstream.
   */
  affinity?: ReplicaAffinity;
};
/** `body` is typed loosely on purpose: callers forward a client's request, checked here at run time. */
export type StreamChatCompletionOptions = Omit<z.input<typeof StreamChatCompletionOptionsSchema>, 'body'> & {
  body: Record<string, unknown>;
};
export type ResolvedStreamOptions = z.output<typeof StreamChatCompletionOptionsSchema>;

// A model listing is short and not tied to a client's generation, so its signal is optional.
export const ListModelsOptionsSchema = z.object({ ...connection, signal: abortSignal.optional() });
export type ListModelsOptions = z.input<typeof ListModelsOptionsSchema>;
export type ResolvedListModelsOptions = z.output<typeof ListModelsOptionsSchema>;

/** Validates at the edge; a bad option is reported as a request error naming the field. */
export function parseUpstreamOptions<S extends z.ZodType>(schema: S, options: unknown): z.output<S> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue ? openAiParam(issue.path) || null : null;
  throw new InvalidRequestError(`invalid upstream request: ${z.prettifyError(result.error)}`, param);
}
