import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { pydanticMissingField, sendValidationError, sendVllmError, zodProblems } from './error-response.ts';
import { BodyTooLargeError, readBody } from './request-body.ts';
import { recordSourceKeyOrder } from './source-key-order.ts';

const BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * A POST body read and checked as vLLM's FastAPI app does it: JSON media type (its
 * validate_json_request dependency), size, syntax, then the route's schema. On a problem the
 * 400 (or 413) is sent in vLLM's words and the result is undefined.
 */
export async function readJsonRequest<S extends z.ZodType>(req: IncomingMessage, res: ServerResponse, schema: S): Promise<z.output<S> | undefined> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    req.resume();
    sendValidationError(res, [{ type: 'media_type', loc: null, msg: "Unsupported Media Type: Only 'application/json' is allowed" }]);
    return undefined;
  }
  let raw: Buffer;
  try {
    raw = await readBody(req, BODY_LIMIT_BYTES);
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    sendVllmError(res, 413, err.message, 'Request Entity Too Large');
    return undefined;
  }
  // FastAPI reads an empty body as no body at all: the route's one body parameter is missing.
  if (raw.length === 0) {
    sendValidationError(res, [{ type: 'missing', loc: ['body'], msg: 'Field required' }]);
    return undefined;
  }
  const text = raw.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    sendValidationError(res, [{ type: 'json_invalid', loc: ['body', jsonErrorPosition(err, text)], msg: 'JSON decode error' }]);
    return undefined;
  }
  const parsed = schema.safeParse(json, { error: pydanticMissingField });
  if (!parsed.success) {
    sendValidationError(res, zodProblems(parsed.error));
    return undefined;
  }
  recordSourceKeyOrder(parsed.data, text);
  return parsed.data;
}

/**
 * Where the JSON went wrong, as FastAPI gives it (`loc: ('body', JSONDecodeError.pos)`): V8 says
 * "at position N" for most mistakes; a text that ends too soon is wrong where it ends, as Python
 * reports it. V8's "Unexpected token" without a position gives 0.
 */
function jsonErrorPosition(err: unknown, text: string): number {
  const message = err instanceof Error ? err.message : '';
  const match = /at position (\d+)/.exec(message);
  if (match) return Number(match[1]);
  return message.includes('end of JSON input') ? text.length : 0;
}
