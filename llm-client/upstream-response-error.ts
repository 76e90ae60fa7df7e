import { UpstreamContextLengthError, UpstreamMaxTokensTooLargeError, UpstreamModelNotFoundError, UpstreamResponseError, type ContextLimits } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { dataPreview } from './data-preview.ts';
import { upstreamErrorMessage, upstreamErrorParam, upstreamErrorStatus } from './upstream-error-message.ts';

// Error bodies are small; a server streaming megabytes of HTML error page is cut here.
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * How long a streaming request waits for an error answer's body once its status line came. Error
 * bodies come whole with their status; one held open (a proxy that never ends its chunked page)
 * must not turn a known 502 into a first-token timeout minutes later. The message is built from
 * what came by then.
 */
export const ERROR_BODY_WAIT_MS = 2000;

/** How much of a non-JSON error body the client's message quotes. */
const MAX_MESSAGE_CHARS = 300;

/** Reads a non-2xx body (bounded) into an error carrying the upstream's own message; `location`: the answer's Location header. */
export async function readUpstreamResponseError(
  status: number,
  body: AsyncIterable<Uint8Array>,
  location?: string,
): Promise<UpstreamResponseError> {
  const errorBody = new ErrorBody(status, { location });
  for await (const chunk of body) if (errorBody.add(chunk)) break;
  return errorBody.error();
}

/** A non-2xx body taken read by read (undici pushes it), kept up to MAX_ERROR_BODY_BYTES. */
export class ErrorBody {
  readonly status: number;
  readonly #retryAfter: string | undefined;
  readonly #location: string | undefined;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  /** `headers`: the answer's Retry-After and Location, when it had them. */
  constructor(status: number, headers: { retryAfter?: string | undefined; location?: string | undefined } = {}) {
    this.status = status;
    this.#retryAfter = headers.retryAfter;
    this.#location = headers.location;
  }

  /** Keeps one read; true once the bound is reached and the rest need not be read. */
  add(chunk: Uint8Array): boolean {
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
    return this.#size >= MAX_ERROR_BODY_BYTES;
  }

  /** The error for what was read so far. */
  error(): UpstreamResponseError {
    const error = upstreamResponseError(this.status, this.#chunks, this.#location);
    if (this.#retryAfter) error.retryAfter = this.#retryAfter;
    return error;
  }
}

/**
 * The error for a non-2xx answer whose body (or its first MAX_ERROR_BODY_BYTES) is `chunks`;
 * `location`: its Location header, which a redirect's error names.
 */
export function upstreamResponseError(status: number, chunks: readonly Uint8Array[], location?: string): UpstreamResponseError {
  // A redirect's body is a proxy's "308 Permanent Redirect" page: where it points is in its header.
  if (status >= 300 && status < 400) return new UpstreamRedirectError(status, location || undefined);
  const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
  let message: string | undefined;
  let param: string | null = null;
  let body: unknown;
  try {
    body = JSON.parse(text);
    message = upstreamErrorMessage(body);
    param = upstreamErrorParam(body);
  } catch {
    message = plainText(text) || undefined;
  }
  if (message === undefined) return new UpstreamResponseError(status, bareStatusMessage(status), param);
  if (status === 404 && MODEL_DOES_NOT_EXIST.test(message)) return new UpstreamModelNotFoundError(message);
  return status === 400 ? contextError(message, param, body) ?? new UpstreamResponseError(status, message, param) : new UpstreamResponseError(status, message, param);
}

/**
 * The error for an error an upstream sent inside its 200 stream (`raw`: the event's data; `body`:
 * that parsed, undefined for plain text or none), after the status line said all was well, so the
 * object's own `code` is all there is to go by:
 * - a context overflow, in any wording contextLimits knows or llama.cpp's: the context errors, as a
 *   400 before the stream would be (llama.cpp queues a request before it measures its prompt, and
 *   vLLM's engine finds a prompt too long only once it runs);
 * - vLLM's engine dead: a 503, which rests the replica, though vLLM (up to 0.11) gives every
 *   exception in a stream its defaults, code 400 `BadRequestError`;
 * - any other: `inStream`, with the code it carries (500 without one), which failover reads as
 *   "another replica may do": an in-stream 400 from vLLM says nothing about the request.
 */
export function inStreamUpstreamError(body: unknown, raw: string): UpstreamResponseError {
  const said = raw.trim();
  const message = upstreamErrorMessage(body) ?? `upstream reported an error mid-stream${said ? `: ${dataPreview(said)}` : ', with no message'}`;
  const param = upstreamErrorParam(body);
  const context = contextError(message, param, body);
  if (context) return context;
  if (ENGINE_DEAD.test(message)) return new UpstreamResponseError(503, message, null);
  const error = new UpstreamResponseError(upstreamErrorStatus(body) ?? 500, message, param);
  error.inStream = true;
  return error;
}

/** The finish reasons that end a request the engine gave up on, not one the model finished. */
export const UNFINISHED_REASONS: ReadonlySet<string> = new Set(['abort', 'error']);

/**
 * `finish_reason: "abort"`: vLLM and SGLang end a request so when the engine dropped it (a pause
 * or weight update, a failed KV transfer, a scheduler abort); `"error"`: vLLM's engine failed it for
 * a retryable internal reason (FINISH_REASON_STRINGS in vllm/v1/engine/__init__.py). Neither is the
 * model finishing: read as `stop`, the cut answer passed for a whole one. `inStream` with a 500 that
 * says why: before any token another replica is tried (the replica does not rest); after, the
 * request fails.
 */
export function abortedByUpstreamError(reason: string): UpstreamResponseError {
  const what = reason === 'abort' ? 'aborted' : 'failed';
  const error = new UpstreamResponseError(500, `the upstream ${what} the request before its answer was finished (finish_reason ${JSON.stringify(reason)})`, null);
  error.inStream = true;
  return error;
}

/** A context-overflow refusal as the error its code says, undefined for any other message. */
function contextError(message: string, param: string | null, body: unknown): UpstreamResponseError | undefined {
  const limits = contextLimits(message) ?? llamaCppContextLimits(body);
  if (limits === undefined) return undefined;
  if (limits.inputTokens >= limits.maxModelLen) return new UpstreamContextLengthError(message, limits);
  // OpenAI names the field it refuses (`max_tokens is too large: …` on param `max_tokens`); older vLLM names none.
  return new UpstreamMaxTokensTooLargeError(message, param ?? 'max_tokens', limits);
}

/**
 * llama.cpp's server words a prompt longer than its context "the request exceeds the available
 * context size, try increasing it" and puts the numbers beside it: `{"error": {"type":
 * "exceed_context_size_error", "n_prompt_tokens": P, "n_ctx": N, …}}`.
 */
function llamaCppContextLimits(body: unknown): ContextLimits | undefined {
  const error = isJsonObject(body) && isJsonObject(body.error) ? body.error : body;
  if (!isJsonObject(error) || error.type !== 'exceed_context_size_error') return undefined;
  const { n_prompt_tokens: inputTokens, n_ctx: maxModelLen } = error;
  return Number.isInteger(inputTokens) && Number.isInteger(maxModelLen) ? { inputTokens: inputTokens as number, maxModelLen: maxModelLen as number } : undefined;
}

/**
 * vLLM's words for an engine that died under its requests (V1's EngineDeadError and its
 * AsyncLLM's message, V0's AsyncEngineDeadError): every request on it fails alike from then on.
 */
const ENGINE_DEAD = /\bEngineCore encountered an issue\b|\bEngineDeadError\b|\bEngine loop has died\b|\bAsyncEngineDeadError\b|\bengine is dead\b/i;

/**
 * The context and the prompt's size a context-overflow 400 states, in the wordings of vLLM (each
 * version's), SGLang and OpenAI; undefined for any other message. Whether the prompt alone overflows
 * (`inputTokens >= maxModelLen`) decides the code:
 * - vLLM >= 0.9: "This model's maximum context length is N tokens. However, your request has P
 *   input tokens. Please reduce the length of the input messages." (the prompt alone), and
 *   "'max_tokens' or 'max_completion_tokens' is too large: M. This model's maximum context length
 *   is N tokens and your request has P input tokens (M > N - P)." (the prompt fits; some builds
 *   append " None");
 * - older vLLM, in the words OpenAI used then: "This model's maximum context length is N tokens.
 *   However, you requested T tokens (P in the messages, M in the completion)." (and "…you requested
 *   P tokens in the messages, Please reduce…" with no max_tokens);
 * - OpenAI now: "This model's maximum context length is N tokens. However, your messages resulted
 *   in P tokens.";
 * - vLLM's engine, past the server's check (V1): "The decoder prompt (length P) is longer than the
 *   maximum model length of N.";
 * - SGLang (inside its stream when the request streams): "The input (P tokens) is longer than the
 *   model's context length (N tokens)." and "Requested token count exceeds the model's maximum
 *   context length of N tokens. You requested a total of T tokens: P tokens from the input messages
 *   and M tokens for the completion. …". SGLang refuses a prompt and max_tokens that reach N (P + M
 *   >= N) where vLLM refuses them past it, so its limit in vLLM's terms is N - 1: read as N, the
 *   max_tokens that fits (N - P) was refused again when a round was sent once more with it.
 *
 * OpenAI gave that old combined message (prompt plus max_tokens) `context_length_exceeded` as well;
 * here only a prompt that does not fit on its own gets it. Clients read the code as "shorten the
 * conversation", which does not help when max_tokens is the excess, and OpenAI's current API
 * refuses a too-large max_tokens as a bad `max_tokens` (code `invalid_value`) instead.
 */
export function contextLimits(message: string): ContextLimits | undefined {
  const engine = ENGINE_PROMPT_TOO_LONG.exec(message) ?? SGLANG_INPUT_TOO_LONG.exec(message);
  if (engine) return { inputTokens: Number(engine[1]), maxModelLen: Number(engine[2]) };
  const sglang = SGLANG_TOTAL_TOO_LONG.exec(message);
  if (sglang) return { inputTokens: Number(sglang[2]), maxModelLen: Number(sglang[1]) - 1 };
  const context = MAXIMUM_CONTEXT.exec(message);
  if (!context) return undefined;
  const input = INPUT_TOKENS.map((re) => re.exec(message)).find((m) => m !== null);
  return input ? { maxModelLen: Number(context[1]), inputTokens: Number(input[1]) } : undefined;
}

const MAXIMUM_CONTEXT = /\bmaximum context length is (\d+) tokens\b/i;
/** The prompt's size, in each wording's place (the first group). */
const INPUT_TOKENS = [
  /\byour request has (\d+) input tokens\b/i,
  /\byou requested \d+ tokens \((\d+) in the messages, \d+ in the completion\)/i,
  /\byou requested (\d+) tokens in the messages\b/i,
  /\byour messages resulted in (\d+) tokens\b/i,
];
const ENGINE_PROMPT_TOO_LONG = /\bprompt \(length (\d+)\) is longer than the maximum model length of (\d+)\b/i;
const SGLANG_INPUT_TOO_LONG = /\binput \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i;
/** The context (first group) and the prompt's size (second). */
const SGLANG_TOTAL_TOO_LONG = /\bexceeds the model's maximum context length of (\d+) tokens\. You requested a total of \d+ tokens: (\d+) tokens from the input messages\b/i;

/**
 * How vLLM ("The model `x` does not exist.") and OpenAI ("… does not exist or you do not have
 * access to it.") word a 404 for a model they do not serve; any other 404 stays as it is.
 */
const MODEL_DOES_NOT_EXIST = /\bmodel\b.*\bdoes not exist\b/i;

/** How much of a Location header a redirect's message quotes. */
const MAX_LOCATION_CHARS = 300;

/**
 * A 3xx: an ingress or proxy that sends plain http to https (301, 308), or a base path that moved.
 * The gateway does not follow it (a POST's body is not sent twice, and where an upstream points is
 * its operator's to set), so the message names where it points. That is the upstream's address:
 * the log's, not every client's (`clientMessage`). With replicas it is that replica's failure,
 * its URL being wrong (failover-stream.ts): it rests, and its requests move on.
 */
export class UpstreamRedirectError extends UpstreamResponseError {
  /** The Location the upstream answered with; undefined when it sent none. */
  readonly location: string | undefined;
  override readonly clientMessage: string;
  constructor(status: number, location: string | undefined) {
    const where = location === undefined ? 'with no Location' : `to ${location.length > MAX_LOCATION_CHARS ? `${location.slice(0, MAX_LOCATION_CHARS)}…` : location}`;
    super(status, `upstream answered HTTP ${status}, a redirect ${where}: the gateway does not follow redirects; set the upstream's base URL to where it points`, null, 'upstream_redirect');
    this.location = location;
    this.clientMessage = `the upstream answered HTTP ${status}, a redirect, which the gateway does not follow: its operator must set the upstream's base URL to where it points`;
  }
}

/** The message of an error whose body said nothing: the status alone. */
export function bareStatusMessage(status: number): string {
  return `upstream answered HTTP ${status}`;
}

/** A body that is not JSON (a proxy's or a web server's HTML error page) as one short line for the client's message. */
function plainText(text: string): string {
  const words = text
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return words.length > MAX_MESSAGE_CHARS ? `${words.slice(0, MAX_MESSAGE_CHARS)}…` : words;
}
