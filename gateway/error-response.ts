import { z } from 'zod';
import { openAiParam } from '../core/openai-param.ts';
import { AuthenticationError, MethodNotAllowedError, ConveyorError, InvalidRequestError, ModelNotFoundError, NotFoundError, UpstreamError, UpstreamResponseError, ClientAbortedError, SandboxError, SandboxLimitError, ShuttingDownError, GatewayBusyError, ToolRejectedError, UnsupportedMediaTypeError, HostNotAllowedError, OriginNotAllowedError, PayloadTooLargeError, RequestTimeoutError, TooManyFollowersError, UnparsableBodyError, UpgradeRequiredError } from '../core/errors.ts';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** An error the gateway meant to raise (ours, or a body the schema refused), not a bug answered as `internal_error`. */
export function isExpectedError(err: unknown): boolean {
  return err instanceof ConveyorError || err instanceof z.ZodError;
}

/** The one place where errors become HTTP statuses, headers and OpenAI-shaped bodies. */
export function toErrorResponse(err: unknown): { status: number; body: OpenAIErrorBody; headers?: Record<string, string> } {
  if (err instanceof z.ZodError) return toErrorResponse(fromZod(err));
  if (!(err instanceof ConveyorError)) {
    return { status: 500, body: body('internal server error', 'server_error', null, 'internal_error') };
  }
  const param = err instanceof InvalidRequestError || err instanceof UpstreamResponseError || err instanceof ModelNotFoundError ? err.param : null;
  const headers = headersOf(err);
  const message = refusedCredentials(err) ? `the upstream refused the gateway's own credentials (HTTP ${(err as UpstreamResponseError).status}: ${err.message}); check its upstream API key` : (err.clientMessage ?? err.message);
  const said = err.afterTools === undefined ? message : `${message} (${err.afterTools})`;
  return { status: statusOf(err), body: body(said, typeOf(err), param, err.code), ...(headers ? { headers } : {}) };
}

/**
 * The upstream's 401/403: the gateway's key (`upstream.apiKey`), not the client's, since the
 * client's is never sent upstream. Passed on as a 401, an OpenAI client would raise an
 * AuthenticationError about a key that is fine: it is the gateway's failure, a 502.
 */
function refusedCredentials(err: ConveyorError): boolean {
  return err instanceof UpstreamResponseError && (err.status === 401 || err.status === 403);
}

function headersOf(err: ConveyorError): Record<string, string> | undefined {
  // OpenAI's clients wait as long as Retry-After says before they retry (up to 60 s).
  if (err instanceof GatewayBusyError) return { 'retry-after': '1' };
  // A 429 passes with its status: its wait too, which the SDKs honour (a 503 becomes 502, no wait to keep).
  if (err instanceof UpstreamResponseError && err.retryAfter !== undefined && statusOf(err) === err.status) return { 'retry-after': err.retryAfter };
  if (err instanceof MethodNotAllowedError) return { allow: err.allowed.join(', ') };
  if (err instanceof UpgradeRequiredError) return { upgrade: 'websocket' };
  return undefined;
}

function statusOf(err: ConveyorError): number {
  if (err instanceof InvalidRequestError) return 400;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof UnsupportedMediaTypeError) return 415;
  if (err instanceof HostNotAllowedError || err instanceof OriginNotAllowedError) return 403;
  if (err instanceof AuthenticationError) return 401;
  if (err instanceof MethodNotAllowedError) return 405;
  if (err instanceof PayloadTooLargeError) return 413;
  if (err instanceof RequestTimeoutError) return 408;
  if (err instanceof UnparsableBodyError) return err.status;
  if (err instanceof UpgradeRequiredError) return 426;
  if (err instanceof TooManyFollowersError) return 429;
  // An error object inside the upstream's 200 stream carries the status its server gave it, and
  // vLLM (up to 0.11) gives every failure there 400: the request had been accepted, so whatever
  // failed is the server's (a 502 that clients retry), bar a 429's "slow down".
  if (err instanceof UpstreamResponseError) return err.status >= 400 && err.status < 500 && !(err.inStream && err.status !== 429) && !refusedCredentials(err) ? err.status : 502;
  if (err.code.endsWith('_timeout') && err instanceof UpstreamError) return 504;
  if (err instanceof UpstreamError) return 502;
  if (err instanceof ClientAbortedError) return 499;
  if (err instanceof ShuttingDownError || err instanceof GatewayBusyError) return 503;
  if (err instanceof ToolRejectedError) return 422;
  if (err instanceof SandboxError || err instanceof SandboxLimitError) return 500;
  return 500;
}

function typeOf(err: ConveyorError): string {
  if (err instanceof InvalidRequestError || err instanceof NotFoundError || err instanceof MethodNotAllowedError || err instanceof UnsupportedMediaTypeError || err instanceof HostNotAllowedError || err instanceof OriginNotAllowedError || err instanceof PayloadTooLargeError || err instanceof RequestTimeoutError || err instanceof UnparsableBodyError || err instanceof UpgradeRequiredError) {
    return 'invalid_request_error';
  }
  // OpenAI's own words for a wrong key (`invalid_request_error`, code `invalid_api_key`), and for
  // any failure of theirs (`server_error`): clients and retry wrappers branch on them. The code
  // says which failure it was (upstream_unreachable, upstream_first_token_timeout, …).
  if (err instanceof AuthenticationError) return 'invalid_request_error';
  // A 4xx the upstream answered is about the client's request (a model it does not serve, a bad
  // field), as OpenAI types it; the status and the upstream's message and param pass through.
  if (err instanceof UpstreamResponseError && statusOf(err) < 500) return 'invalid_request_error';
  if (err instanceof ToolRejectedError) return 'tool_error';
  // OpenAI's type for a limit on how many requests at once (its rate limits' 429s).
  if (err instanceof TooManyFollowersError) return 'requests';
  return 'server_error';
}

function body(message: string, type: string, param: string | null, code: string): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export function fromZod(err: z.ZodError): InvalidRequestError {
  const issue = err.issues[0];
  const path = issue ? openAiParam(issue.path) : '';
  const message = issue ? `${path ? `${path}: ` : ''}${issue.message}` : 'invalid request body';
  return new InvalidRequestError(message, path || null);
}
