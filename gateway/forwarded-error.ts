import { STATUS_CODES } from 'node:http';
import { UpstreamModelNotFoundError, UpstreamResponseError } from '../core/errors.ts';
import { bareStatusMessage, MAX_ERROR_BODY_BYTES, upstreamResponseError } from '../llm-client/upstream-response-error.ts';
import { toErrorResponse } from './error-response.ts';
import { isJsonObject } from '../core/json-object.ts';

/**
 * The codes of the gateway's own errors of these statuses (NotFoundError, MethodNotAllowedError …),
 * so an upstream's bare 404 reads as the gateway's own 404 does; any other status keeps the code
 * every upstream error has on the chat route.
 */
const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'request_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_request',
};

/**
 * A forwarded request's error answer (status 400 or above), held whole before anything of it goes
 * to the client: one already in OpenAI's shape (`{"error": {"message": …}}`: vLLM's own errors, the
 * OpenAI API's) goes out byte for byte; any other (FastAPI's `{"detail": "Not Found"}` for a route
 * vLLM does not have, its 405 and 422, vLLM's `{"error": "Unauthorized"}`, a proxy's HTML page,
 * nothing) becomes one, keeping the upstream's status, headers and message, so that every error a
 * client gets from the gateway has OpenAI's shape. Only the first MAX_ERROR_BODY_BYTES are kept;
 * a body cut there is not JSON and is quoted as text.
 */
export class ForwardedErrorAnswer {
  readonly status: number;
  readonly #headers: Record<string, string | string[]>;
  /** What the message names: `POST /v1/nonexist`. */
  readonly #request: string;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  /**
   * Whether an answer can be read to be rewritten: an error status, and a body the gateway can
   * read (a compressed one, which vLLM never sends, passes as it is).
   */
  static wanted(status: number, headers: Record<string, string | string[]>): boolean {
    const encoding = String(headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    return status >= 400 && (encoding === 'identity' || encoding === '');
  }

  /** `headers`: the answer's headers as the client would get them; `method` and `path` as the client sent them. */
  constructor(status: number, headers: Record<string, string | string[]>, method: string, path: string) {
    this.status = status;
    this.#headers = headers;
    this.#request = `${method} ${path}`;
  }

  /** One read of the body; what comes past the bound is dropped. */
  add(chunk: Buffer): void {
    if (this.#size >= MAX_ERROR_BODY_BYTES) return;
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
  }

  /**
   * The answer for the client: its status (the upstream's, bar a 401/403), the headers and the body to end it with, and the error's code for
   * the access line (an OpenAI-shaped body's own `code`, or its `type` where that is not a string,
   * as vLLM's numeric one is).
   */
  answer(): { status: number; headers: Record<string, string | string[]>; body: Buffer; code: string } {
    const bytes = Buffer.concat(this.#chunks, this.#size);
    // A 401/403 refused the gateway's own key (the client's is never sent upstream): the gateway's
    // failure, answered as the chat route answers it (a 502 saying so), not as the client's 401.
    const credentials = this.status === 401 || this.status === 403;
    const own = this.#size < MAX_ERROR_BODY_BYTES && !credentials ? openAIErrorCode(bytes) : undefined;
    const rewritten = own === undefined ? toErrorResponse(this.error()) : undefined;
    const body = rewritten === undefined ? bytes : Buffer.from(JSON.stringify(rewritten.body));
    const headers = { ...this.#headers };
    for (const name of Object.keys(headers)) if (name.startsWith('content-')) delete headers[name];
    if (credentials) delete headers['www-authenticate'];
    if (body !== bytes) headers['content-type'] = 'application/json';
    else if (this.#headers['content-type'] !== undefined) headers['content-type'] = this.#headers['content-type'];
    headers['content-length'] = String(body.length);
    return { status: credentials ? 502 : this.status, headers, body, code: rewritten?.body.error.code ?? own! };
  }

  /** The answer read as a chat round reads an upstream's error (its own message): what classifyReplicaFailure judges. */
  upstreamError(): UpstreamResponseError {
    return upstreamResponseError(this.status, this.#chunks);
  }

  /** The upstream's answer as the gateway's typed error, its message saying where it came from. */
  error(): UpstreamResponseError {
    const read = upstreamResponseError(this.status, this.#chunks);
    const said = read.message === bareStatusMessage(this.status) ? (STATUS_CODES[this.status] ?? `HTTP ${this.status}`) : read.message;
    const message = `${said} (upstream: ${this.#request})`;
    if (read instanceof UpstreamModelNotFoundError) return new UpstreamModelNotFoundError(message);
    return new UpstreamResponseError(this.status, message, read.param, CODE_OF_STATUS[this.status] ?? read.code);
  }
}

/**
 * For a body OpenAI's clients read as an error (an object whose `error` is an object with a
 * `message`), the code to log it by; undefined for any other body.
 */
function openAIErrorCode(bytes: Buffer): string | undefined {
  const body = parsed(bytes);
  if (!isJsonObject(body) || !isJsonObject(body.error) || typeof body.error.message !== 'string') return undefined;
  const { code, type } = body.error;
  return typeof code === 'string' ? code : typeof type === 'string' ? type : 'upstream_error';
}

function parsed(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

