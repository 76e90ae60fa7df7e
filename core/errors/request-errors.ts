import { ConveyorError } from './conveyor-error.ts';

// What the client sent, or how: refused with a 4xx before any work starts.

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

/**
 * A request still arriving when `clientTimeouts.requestMs` ran out (Node's requestTimeout): the
 * server answered it 408 and closed its connection; the route reading its body ends with this.
 */
export class RequestTimeoutError extends ConveyorError {
  constructor() {
    super('request_timeout', 'the request was still arriving when clientTimeouts.requestMs ran out');
  }
}

/**
 * A body Node's HTTP parser refused part-way (a malformed chunk size: 400; a chunk extension past
 * its limit: 413), answered by the server with that status, as Node answers it; the route reading
 * the body ends with this rather than taking the closed connection for a client that left.
 */
export class UnparsableBodyError extends ConveyorError {
  readonly status: 400 | 413;
  constructor(status: 400 | 413, parserError: string | undefined) {
    super('unparsable_request', `the request body could not be parsed${parserError ? ` (${parserError})` : ''}`);
    this.status = status;
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

/** The client went away; the request's work is cancelled. */
export class ClientAbortedError extends ConveyorError {
  constructor() {
    super('client_aborted', 'the client closed the connection');
  }
}
