import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { InvalidRequestError, NotFoundError } from '../core/errors.ts';
import { sendJson } from './json-response.ts';
import { PYDANTIC_TYPE } from './pydantic-lax.ts';

/** vLLM's ErrorResponse: `{"error": {message, type, param, code}}`. */
export interface VllmErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

export function sendVllmError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null = null,
): void {
  const body: VllmErrorBody = { error: { message, type, param, code: status } };
  sendJson(res, status, body);
}

/**
 * A 400 the way vLLM's RequestValidationError handler words it: "N validation error(s):" and one
 * line per problem, with `param` the dotted location of the first one (`body.messages.0.role`).
 */
export function sendValidationError(res: ServerResponse, problems: readonly ValidationProblem[]): void {
  const label = problems.length === 1 ? 'error' : 'errors';
  const lines = problems.map((p) =>
    p.loc === null ? `  ${p.msg}` : `  {'type': '${p.type}', 'loc': (${pyTuple(p.loc)}), 'msg': ${pyString(p.msg)}}`,
  );
  const message = `${problems.length} validation ${label}:\n${lines.join('\n')}`;
  const first = problems[0];
  const param = first?.param !== undefined ? first.param : first?.loc ? first.loc.join('.') : null;
  sendVllmError(res, 400, message, 'Bad Request', param);
}

export interface ValidationProblem {
  type: string;
  /** Location starting with 'body', or null for a problem with the request as a whole. */
  loc: Array<string | number> | null;
  msg: string;
  /** The error's `param` when it is not the dotted `loc` (vLLM names the field a model validator refused, or none). */
  param?: string | null;
}

/**
 * A check of one of vLLM's protocol.py model validators (`mode="before"`, run on the whole body):
 * pydantic reports the ValueError it raises as `value_error` at loc `('body',)`, its message
 * prefixed "Value error, ". `param` is what vLLM sends as the error's param: the field a
 * VLLMValidationError names, null for a plain ValueError.
 */
export function addValueError(ctx: z.RefinementCtx, message: string, param: string | null = null): void {
  ctx.addIssue({ code: 'custom', path: [], message, params: { valueError: true, param } });
}

const FIELD_REQUIRED = 'Field required';

/**
 * A zod error map for request bodies: a required field left out is pydantic's "Field required"
 * (type `missing`, zodProblems), whatever the field's type; zod would say "expected array, received
 * undefined". JSON has no undefined, so an undefined input is a key the client did not send.
 */
export const pydanticMissingField: z.core.$ZodErrorMap = (issue) =>
  issue.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value') ? FIELD_REQUIRED : undefined;

export function zodProblems(error: z.ZodError): ValidationProblem[] {
  return error.issues.map((issue) => {
    if (issue.code === 'custom' && issue.params?.['valueError'] === true) {
      return { type: 'value_error', loc: ['body'], msg: `Value error, ${issue.message}`, param: (issue.params['param'] as string | null) ?? null };
    }
    const loc = ['body', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.message === FIELD_REQUIRED) return { type: 'missing', loc, msg: FIELD_REQUIRED };
    const pydanticType = issue.code === 'custom' ? issue.params?.[PYDANTIC_TYPE] : undefined;
    // zod's invalid_value (an enum or literal the input is not) is pydantic's literal_error.
    const type = typeof pydanticType === 'string' ? pydanticType : issue.code === 'invalid_value' ? 'literal_error' : issue.code;
    return { type, loc, msg: issue.message };
  });
}

/** A string as Python's repr() writes it: in double quotes when it holds a single quote and no double one. */
function pyString(s: string): string {
  const escaped = s.replaceAll('\\', '\\\\').replaceAll('\n', '\\n');
  if (s.includes("'") && !s.includes('"')) return `"${escaped}"`;
  return `'${escaped.replaceAll("'", "\\'")}'`;
}

function pyTuple(loc: ReadonlyArray<string | number>): string {
  const items = loc.map((p) => (typeof p === 'number' ? String(p) : pyString(p)));
  return items.length === 1 ? `${items[0]},` : items.join(', ');
}

/** Maps the typed errors a route throws to vLLM's status and `type` (serving_engine's names). */
export function sendErrorFor(res: ServerResponse, err: unknown): void {
  if (err instanceof InvalidRequestError) return sendVllmError(res, 400, err.message, 'BadRequestError', err.param);
  if (err instanceof NotFoundError) return sendVllmError(res, 404, err.message, 'NotFoundError', 'model');
  const message = err instanceof Error ? err.message : String(err);
  sendVllmError(res, 500, message, 'InternalServerError');
}
