/**
 * One error hierarchy with stable codes (undici style). Every module throws these; only
 * gateway/error-response.ts turns them into HTTP statuses and OpenAI error bodies.
 */
export class ConveyorError extends Error {
  /** Stable, machine-readable; never change an existing one. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The client sent something we cannot accept. `param` names the offending field. */
export class InvalidRequestError extends ConveyorError {
  readonly param: string | null;
  constructor(message: string, param: string | null = null) {
    super('invalid_request', message);
    this.param = param;
  }
}

/**
 * A body that is not declared `application/json`. Refused before it is read, as vLLM does: a web
 * page can send a text/plain POST to a local gateway without the browser asking first (no CORS
 * preflight), so accepting any type would let any site the user visits run the gateway's tools.
 */
export class UnsupportedMediaTypeError extends ConveyorError {
  constructor(received: string | undefined, message = `Content-Type must be application/json (got ${received ? `"${received}"` : 'none'})`) {
    super('unsupported_media_type', message);
  }

  /** A compressed body (`Content-Encoding: gzip` …): the gateway reads bodies as sent, as vLLM does. */
  static encoding(encoding: string): UnsupportedMediaTypeError {
    return new UnsupportedMediaTypeError(undefined, `Content-Encoding "${encoding}" is not supported; send the body uncompressed`);
  }
}

/** A request body over `maxBodyBytes`: refused before or while it is read, so it never fills memory. */
export class PayloadTooLargeError extends ConveyorError {
  constructor(maxBytes: number) {
    super('request_too_large', `request body exceeds ${maxBytes} bytes`);
  }
}

/** A plain GET on a WebSocket endpoint (the request events): answered 426 with `Upgrade: websocket`. */
export class UpgradeRequiredError extends ConveyorError {
  constructor(path: string) {
    super('upgrade_required', `${path} is a WebSocket endpoint: open it with an Upgrade: websocket request`);
  }
}

/** A keyless gateway on loopback was addressed by a DNS name that is not a loopback one (gateway/host-check.ts). */
export class HostNotAllowedError extends ConveyorError {
  constructor(host: string, listenHost: string) {
    super(
      'host_not_allowed',
      `Host "${host}" is not allowed: this gateway listens on ${listenHost} without API keys, so it answers only requests addressed to a loopback name or an IP address (DNS rebinding protection). Allow the name with --allowed-host, or require keys with --api-key.`,
    );
  }
}

/** A browser preflight from an origin the gateway does not allow (gateway/cors.ts). */
export class OriginNotAllowedError extends ConveyorError {
  constructor(origin: string) {
    super(
      'origin_not_allowed',
      `Origin "${origin}" is not allowed: web pages may call this gateway only from the origins given with --allowed-origin (config allowedOrigins).`,
    );
  }
}

export class NotFoundError extends ConveyorError {
  constructor(message: string, code = 'not_found') {
    super(code, message);
  }
}

/** OpenAI's answer to a model it does not serve: 404, code `model_not_found`, on `param: "model"` as the chat route's. */
export class ModelNotFoundError extends NotFoundError {
  readonly param = 'model';
  constructor(model: string) {
    super(`The model \`${model}\` does not exist.`, 'model_not_found');
  }
}

/** Base for everything that goes wrong talking to the model server. */
export class UpstreamError extends ConveyorError {}

export class UpstreamConnectTimeoutError extends UpstreamError {
  constructor(ms: number, url: string) {
    super('upstream_connect_timeout', `connecting to upstream ${url} took longer than ${ms} ms`);
  }
}

export class UpstreamHeadersTimeoutError extends UpstreamError {
  constructor(ms: number) {
    super('upstream_headers_timeout', `upstream sent no response headers within ${ms} ms`);
  }
}

export class UpstreamFirstTokenTimeoutError extends UpstreamError {
  constructor(ms: number) {
    super('upstream_first_token_timeout', `upstream sent no token within ${ms} ms of the request`);
  }
}

export class UpstreamIdleTimeoutError extends UpstreamError {
  constructor(ms: number) {
    super('upstream_idle_timeout', `upstream went silent for more than ${ms} ms mid-stream`);
  }
}

/** The upstream answered with an HTTP error or sent an error object in its stream. */
export class UpstreamResponseError extends UpstreamError {
  readonly status: number;
  /** The field the upstream's error named (vLLM's `param`, e.g. `temperature`), when it named one. */
  readonly param: string | null;
  /** The upstream's Retry-After (a 429 or 503), passed on to the client with the status it keeps. */
  retryAfter?: string;
  /** Sent inside a 200 stream: its status is the error object's own `code`, which vLLM sets to 400 for any failure there. */
  inStream?: boolean;
  constructor(status: number, message: string, param: string | null = null, code = 'upstream_response_error') {
    super(code, message);
    this.status = status;
    this.param = param;
  }
}

/**
 * The upstream's 404 for a model it does not serve (vLLM: "The model `x` does not exist."), with
 * OpenAI's code and param for it, `model_not_found` on `model`: what GET /v1/models/:id answers
 * (ModelNotFoundError), so a client reads one unknown model the same way on every route.
 */
export class UpstreamModelNotFoundError extends UpstreamResponseError {
  constructor(message: string) {
    super(404, message, 'model', 'model_not_found');
  }
}

/** What an upstream's context-overflow 400 said: its context, and the prompt's size in its tokens. */
export interface ContextLimits {
  /** The model's context, prompt and reply together (vLLM's `max_model_len`). */
  maxModelLen: number;
  inputTokens: number;
}

/**
 * The upstream's 400 for a prompt that alone does not fit the model's context (vLLM: "This
 * model's maximum context length is 32768 tokens. However, your request has 33000 input
 * tokens…"), with OpenAI's code and param for it, `context_length_exceeded` on `messages`: the
 * code clients branch on to shorten the conversation and try again.
 */
export class UpstreamContextLengthError extends UpstreamResponseError {
  readonly maxModelLen: number;
  readonly inputTokens: number;
  constructor(message: string, limits: ContextLimits) {
    super(400, message, 'messages', 'context_length_exceeded');
    this.maxModelLen = limits.maxModelLen;
    this.inputTokens = limits.inputTokens;
  }
}

/**
 * The upstream's 400 for a prompt that fits the context but leaves less room than max_tokens asks
 * for (vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 32272. This model's maximum
 * context length is 32768 tokens and your request has 686 input tokens (32272 > 32768 - 686)."). Its
 * code stays `upstream_response_error`: the client's fix is a smaller max_tokens, not a shorter
 * conversation (OpenAI words its own "max_tokens is too large" on param `max_tokens`, code
 * `invalid_value`). A later round of a tool request sends it again with `tokensThatFit`.
 */
export class UpstreamMaxTokensTooLargeError extends UpstreamResponseError {
  readonly maxModelLen: number;
  readonly inputTokens: number;
  constructor(message: string, param: string | null, limits: ContextLimits) {
    super(400, message, param);
    this.maxModelLen = limits.maxModelLen;
    this.inputTokens = limits.inputTokens;
  }

  /** The largest max_tokens this prompt leaves room for. */
  get tokensThatFit(): number {
    return this.maxModelLen - this.inputTokens;
  }
}

export class UpstreamConnectionError extends UpstreamError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('upstream_connection_error', message, options);
  }
}

/** The stream ended or was malformed in a way no OpenAI-compatible server produces. */
export class UpstreamProtocolError extends UpstreamError {
  constructor(message: string) {
    super('upstream_protocol_error', message);
  }
}

/** The client went away; the request's work is cancelled. */
export class ClientAbortedError extends ConveyorError {
  constructor() {
    super('client_aborted', 'the client closed the connection');
  }
}

/** A tool's sandbox stopped it: CPU, memory, wall clock, output size. */
export class SandboxLimitError extends ConveyorError {
  readonly limit: string;
  constructor(limit: string, message: string) {
    super('sandbox_limit_exceeded', message);
    this.limit = limit;
  }
}

/** The sandbox process itself failed (crashed, could not start, broke the IPC protocol). */
export class SandboxError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sandbox_error', message, options);
  }
}

/** A plugin rejected a call while it was being decoded. */
export class ToolRejectedError extends ConveyorError {
  readonly tool: string;
  readonly reason: string;
  constructor(tool: string, reason: string, message = `${tool} rejected the call: ${reason}`) {
    super('tool_rejected', message);
    this.tool = tool;
    this.reason = reason;
  }

  /** The model called `tool`, which the request has no tool under: refused by the gateway, not by a tool. */
  static undeclared(tool: string, reason: string): ToolRejectedError {
    return new ToolRejectedError(tool, reason, `the model called a tool this request does not have: ${reason}`);
  }
}

export class AuthenticationError extends ConveyorError {
  constructor() {
    super('invalid_api_key', 'missing or invalid API key (send "Authorization: Bearer <key>")');
  }
}

export class MethodNotAllowedError extends ConveyorError {
  /** The methods the path takes, for the 405's `Allow` header (RFC 9110 §15.5.6). */
  readonly allowed: readonly string[];
  constructor(method: string, path: string, allowed: readonly string[]) {
    super('method_not_allowed', `${method} is not allowed on ${path} (${allowed.join(', ')} is)`);
    this.allowed = allowed;
  }
}

/** The optional whole-stream deadline (off by default, so long streams are never cut by it). */
export class UpstreamTotalTimeoutError extends UpstreamError {
  constructor(ms: number) {
    super('upstream_total_timeout', `upstream stream did not finish within ${ms} ms`);
  }
}

/** A simulator profile or scenario file is missing or does not match its schema. */
export class SimConfigError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sim_config_invalid', message, options);
  }
}

/** A plugin runtime's pool has no free slot and its queue is full: the call is refused, not delayed. */
export class SandboxQueueFullError extends ConveyorError {
  readonly runtime: string;
  constructor(runtime: string, message: string) {
    super('sandbox_queue_full', message);
    this.runtime = runtime;
  }

  /** The refusal of a runtime's BoundedQueue. */
  static refusal(runtime: string): (queue: { capacity: number; waiting: number }) => SandboxQueueFullError {
    return (queue) => new SandboxQueueFullError(runtime, `the ${runtime} runtime is busy: ${queue.capacity} running and ${queue.waiting} queued`);
  }
}

/** The gateway's configuration (CLI flags, `startGateway` options) is not valid: reported at start-up. */
export class GatewayConfigError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('gateway_config_invalid', message, options);
  }
}

/**
 * The gateway is answering `maxConcurrentRequests` chat completions and `maxQueuedRequests` more
 * wait for a place: one more is turned away at once (HTTP 503 with Retry-After, which OpenAI's
 * clients retry), not queued without bound.
 */
export class GatewayBusyError extends ConveyorError {
  constructor(running: number, queued: number) {
    super('gateway_busy', `the gateway is at its limit of ${running} requests at once, with ${queued} more waiting; retry shortly`);
  }
}

/**
 * A request already has `limit` followers on its events WebSocket: one more is refused (HTTP 429)
 * rather than given another copy of every event the request marks.
 */
export class TooManyFollowersError extends ConveyorError {
  constructor(requestId: string, limit: number) {
    super('too_many_followers', `request ${requestId} already has ${limit} followers on its events, the most one request may have; close one, or read GET /v1/requests/${requestId}/timeline instead`);
  }
}

/** The gateway is draining for shutdown: requests in flight finish, new ones are turned away. */
export class ShuttingDownError extends ConveyorError {
  constructor(message = 'the gateway is shutting down; retry on another instance') {
    super('gateway_shutting_down', message);
  }
}

/** A request still running when the shutdown's grace period ran out (or a second signal came): cut, and told so. */
export function cutByShutdown(): ShuttingDownError {
  return new ShuttingDownError('the gateway shut down before this request finished (its shutdown grace period ran out); retry on another instance');
}

/**
 * A thrown value as the phrase a tool error quotes (`error: X failed: <this>`): a plain Error's
 * message alone, another class's name with its message (`TypeError: …` says what kind of bug), a
 * thrown string as it is, any other object as JSON (`throw { code: 42 }` read `[object Object]`).
 * Every runtime and the dispatcher use it, so one plugin bug reads the same wherever it ran.
 * Duck-typed: an Error from another realm (node:vm) is one too.
 */
export function thrownMessage(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (typeof e === 'object' && e !== null && typeof e.message === 'string') {
    return typeof e.name !== 'string' || e.name === 'Error' || e.name === '' ? e.message : `${e.name}: ${e.message}`;
  }
  if (typeof err !== 'object' || err === null) return String(err);
  let json: string | undefined;
  try {
    json = JSON.stringify(err);
  } catch {
    // A cycle or a BigInt inside: String() is all there is.
  }
  if (json === undefined) return String(err);
  return json.length > 500 ? `${json.slice(0, 500)}…` : json;
}
