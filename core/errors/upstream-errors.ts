import { ConveyorError } from './conveyor-error.ts';

// Everything that goes wrong talking to the model server.

/** Base for everything that goes wrong talking to the model server. */
export class UpstreamError extends ConveyorError {}

export class UpstreamConnectTimeoutError extends UpstreamError {
  constructor(ms: number, url: string) {
    super('upstream_connect_timeout', `connecting to upstream ${url} took longer than ${ms} ms`, { clientMessage: `connecting to the upstream took longer than ${ms} ms` });
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

/** The optional whole-stream deadline (off by default, so long streams are never cut by it). */
export class UpstreamTotalTimeoutError extends UpstreamError {
  constructor(ms: number) {
    super('upstream_total_timeout', `upstream stream did not finish within ${ms} ms`);
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

/**
 * The upstream's 404 model_not_found for the model the gateway names in every request (its
 * `upstream.model`, `--model`): the gateway's setting is wrong, not the client's request, so it is
 * the gateway's failure (502), as the upstream's refusal of the gateway's own key is.
 */
export class UpstreamModelNotServedError extends UpstreamError {
  constructor(model: string, upstreamMessage: string) {
    super('upstream_model_not_served', `the upstream does not serve model '${model}', which the gateway names in every request (upstream.model): ${upstreamMessage}`, {
      clientMessage: `the gateway is set to a model its upstream does not serve ('${model}'); its operator must change upstream.model (--model) or the upstream`,
    });
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
  constructor(message: string, options?: { cause?: unknown; clientMessage?: string }) {
    super('upstream_connection_error', message, options);
  }
}

/** The stream ended or was malformed in a way no OpenAI-compatible server produces. */
export class UpstreamProtocolError extends UpstreamError {
  /** The HTTP status the upstream answered, when that status is what made the answer unusable. */
  readonly upstreamStatus?: number;
  constructor(message: string, options?: { clientMessage?: string; upstreamStatus?: number }) {
    super('upstream_protocol_error', message, options);
    if (options?.upstreamStatus !== undefined) this.upstreamStatus = options.upstreamStatus;
  }
}
