import { z } from 'zod';

/**
 * Number and boolean fields as vLLM's pydantic models read them in lax mode, its default: a client
 * that sends `"max_tokens": "5"` or `"stream": "true"` is served by vLLM, so it must be here too.
 * What pydantic refuses gets its error type and words (`int_parsing`, "Input should be a valid
 * integer, unable to parse string as an integer"), which zodProblems puts in the 400.
 *
 * One difference, on purpose: the strings "inf" and "nan", which pydantic takes for a float, are
 * refused (JSON has no such numbers, and no sampler wants them).
 */

/** pydantic's error `type` for an issue, carried in the issue's params. */
export const PYDANTIC_TYPE = 'pydanticType';

const INT_STRING = /^[+-]?\d+(?:_\d+)*(?:\.0*)?$/;
const FLOAT_STRING = /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$/;
const TRUE_STRINGS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_STRINGS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

type Refusal = { type: string; msg: string };
type Read<T> = { value: T } | Refusal;

function refuse(ctx: z.RefinementCtx, refusal: Refusal): never {
  ctx.addIssue({ code: 'custom', message: refusal.msg, params: { [PYDANTIC_TYPE]: refusal.type } });
  return z.NEVER as never;
}

function lax<T>(read: (input: unknown) => Read<T>) {
  return z.unknown().transform((input, ctx): T => {
    const result = read(input);
    return 'value' in result ? result.value : refuse(ctx, result);
  });
}

/** Python's int(): "5", " 5 ", "1_000", "5.0", 5.0 and true are integers; 5.5 and "5.5" are not. */
export function readLaxInt(input: unknown): Read<number> {
  if (typeof input === 'boolean') return { value: input ? 1 : 0 };
  if (typeof input === 'number') {
    if (Number.isInteger(input)) return { value: input };
    return { type: 'int_from_float', msg: 'Input should be a valid integer, got a number with a fractional part' };
  }
  if (typeof input === 'string') {
    const text = input.trim();
    if (INT_STRING.test(text)) return { value: Number(text.replaceAll('_', '').replace(/\.0*$/, '')) };
    return { type: 'int_parsing', msg: 'Input should be a valid integer, unable to parse string as an integer' };
  }
  return { type: 'int_type', msg: 'Input should be a valid integer' };
}

/** Python's float() over numbers and numeric strings ("0.5", "1e-3", " 2 "); true is 1.0. */
export function readLaxFloat(input: unknown): Read<number> {
  if (typeof input === 'boolean') return { value: input ? 1 : 0 };
  if (typeof input === 'number') return { value: input };
  if (typeof input === 'string') {
    const text = input.trim();
    if (FLOAT_STRING.test(text)) return { value: Number(text.replaceAll('_', '')) };
    return { type: 'float_parsing', msg: 'Input should be a valid number, unable to parse string as a number' };
  }
  return { type: 'float_type', msg: 'Input should be a valid number' };
}

/** pydantic's bool: 0 and 1, and "true"/"false", "yes"/"no", "on"/"off", "t"/"f", "y"/"n", "1"/"0" in any case. */
export function readLaxBool(input: unknown): Read<boolean> {
  if (typeof input === 'boolean') return { value: input };
  if (input === 0 || input === 1) return { value: input === 1 };
  if (typeof input === 'string') {
    const text = input.toLowerCase();
    if (TRUE_STRINGS.has(text)) return { value: true };
    if (FALSE_STRINGS.has(text)) return { value: false };
  }
  if (typeof input === 'string' || typeof input === 'number') {
    return { type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input' };
  }
  return { type: 'bool_type', msg: 'Input should be a valid boolean' };
}

/** An `int` field of a vLLM request model. */
export const laxInt = () => lax(readLaxInt);
/** A `float` field of a vLLM request model. */
export const laxFloat = () => lax(readLaxFloat);
/** A `bool` field of a vLLM request model. */
export const laxBool = () => lax(readLaxBool);
