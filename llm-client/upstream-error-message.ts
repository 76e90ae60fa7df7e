import { isJsonObject } from '../core/json-object.ts';
import { openAiParam } from '../core/openai-param.ts';

/**
 * Pulls the human message out of the error bodies OpenAI-compatible servers send, both as a
 * non-2xx response body and as an `error` object inside the stream:
 * - OpenAI, SGLang, llama.cpp, newer vLLM: `{"error": {"message": "...", "code": 400}}`
 * - older vLLM: `{"object": "error", "message": "...", "code": 400}` (also nested under `error`)
 * - FastAPI validation: `{"detail": "..."}` or `{"detail": [{...}]}`
 */
export function upstreamErrorMessage(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const { error } = body;
  if (typeof error === 'string' && error.length > 0) return error;
  if (isJsonObject(error)) return upstreamErrorMessage(error);
  if (typeof body.message === 'string' && body.message.length > 0) return body.message;
  if (typeof body.detail === 'string') return body.detail;
  const validation = fastApiValidation(body.detail);
  if (validation !== undefined) return validation.message;
  if (body.detail !== undefined) return JSON.stringify(body.detail);
  return undefined;
}

/**
 * FastAPI's 422 (`{"detail": [{"loc": ["body", "prompt"], "msg": "Field required", "input": …}]}`,
 * SGLang's and vLLM's routes' own validation) as one line naming each field, and the first field
 * as OpenAI's `param`, rather than the list's JSON, which quotes the client's whole body back at it (`input`).
 */
function fastApiValidation(detail: unknown): { message: string; param: string | null } | undefined {
  if (!Array.isArray(detail) || detail.length === 0) return undefined;
  const issues = detail.filter(isJsonObject).filter((d) => typeof d.msg === 'string');
  if (issues.length === 0) return undefined;
  const field = (d: Record<string, unknown>) => (Array.isArray(d.loc) ? openAiParam(d.loc.filter((p, i) => i > 0 || p !== 'body').map((p) => (typeof p === 'number' ? p : String(p)))) : '');
  const message = issues.map((d) => (field(d) === '' ? String(d.msg) : `${field(d)}: ${String(d.msg)}`)).join('; ');
  return { message, param: field(issues[0]!) || null };
}

/**
 * The request field an error body names (`param`, OpenAI's and vLLM's), when it names one, as
 * OpenAI names it: vLLM's validation errors give FastAPI's location (`body.seed`, or `body` for
 * the whole body), which is the same field with the request's part in front.
 */
export function upstreamErrorParam(body: unknown): string | null {
  if (!isJsonObject(body)) return null;
  if (isJsonObject(body.error)) return upstreamErrorParam(body.error);
  const validation = fastApiValidation(body.detail);
  if (validation !== undefined) return validation.param;
  if (typeof body.param !== 'string' || body.param.length === 0 || body.param === 'body') return null;
  // vLLM's FastAPI location as one string (`body.messages.0.role`): its numbers are list indices.
  const field = body.param.startsWith('body.') ? body.param.slice('body.'.length) : body.param;
  return openAiParam(field.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part)));
}

/** The HTTP-like status an in-stream error object carries, when it carries a usable one. */
export function upstreamErrorStatus(body: unknown): number | undefined {
  if (!isJsonObject(body)) return undefined;
  if (isJsonObject(body.error)) return upstreamErrorStatus(body.error);
  const code = typeof body.code === 'string' ? Number(body.code) : body.code;
  return typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : undefined;
}

/** True when a parsed SSE data object is an error report rather than a chunk. */
export function isUpstreamErrorObject(body: unknown): boolean {
  return isJsonObject(body) && ((body.error !== undefined && body.error !== null) || body.object === 'error');
}
