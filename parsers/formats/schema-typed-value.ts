import { z } from 'zod';
import { jsonNumberValue } from '../json/json-number-value.ts';
import { asciiDecimalDigits } from './python-decimal-digits.ts';
import { pythonFloatJson, pythonIntJson } from './python-number-json.ts';
import { parsePythonLiteral } from './python-value-parser.ts';
import { redumpJson } from './redump-json.ts';

/** An OpenAI `tools` entry, as far as the parsers need it (the rest passes through). */
export const ToolDefinitionSchema = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string().min(1),
        parameters: z.record(z.string(), z.unknown()).optional(),
      })
      .loose(),
  })
  .loose();

export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

/** tool name → parameter name → its JSON-schema `type` (lower-cased strings; a list for unions). */
export type ParameterTypes = Map<string, Map<string, string[]>>;

export function parameterTypes(tools: readonly ToolDefinition[] | undefined): ParameterTypes {
  const byTool: ParameterTypes = new Map();
  for (const tool of tools ?? []) {
    const properties = tool.function.parameters?.properties;
    const types = new Map<string, string[]>();
    if (typeof properties === 'object' && properties !== null) {
      for (const [name, schema] of Object.entries(properties)) types.set(name, schemaTypes(schema));
    }
    byTool.set(tool.function.name, types);
  }
  return byTool;
}

/**
 * A property schema's types: its `type` (one or a list), else those of its `anyOf`/`oneOf`
 * branches, which is how Pydantic writes `Optional[int]` (`anyOf: [{type: integer}, {type:
 * null}]`), as vLLM's qwen3_coder reads them; a schema or branch without a type (`$ref`, an enum
 * alone) counts as a string, so its value stays the text the model wrote.
 */
function schemaTypes(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return ['string'];
  const { type, anyOf, oneOf } = schema as { type?: unknown; anyOf?: unknown; oneOf?: unknown };
  const branches = Array.isArray(anyOf) ? anyOf : Array.isArray(oneOf) ? oneOf : undefined;
  if (type === undefined && branches !== undefined && branches.length > 0) return [...new Set(branches.flatMap((b) => schemaTypes(b)))];
  return (Array.isArray(type) ? type : [type ?? 'string']).map((t) => String(t).trim().toLowerCase());
}

/** A converted parameter: its value, and its JSON as vLLM (Python's `json.dumps`) writes it. */
export interface TypedValue {
  value: unknown;
  json: string;
}

/**
 * Converts a raw text parameter value (Qwen3-Coder XML) to the type the tool's schema gives it,
 * after vLLM's qwen3_coder rules: integers and numbers as Python's int()/float() read them,
 * objects and arrays as JSON, else as a Python literal (digits of any script, such as `٤٢`, read
 * as int() and float() read them); anything that does not convert stays
 * the text it was. `json` is what the client reads, so it keeps what Python keeps and a double
 * cannot: every digit of an int (an id past 2^53), and floats in Python's repr (see
 * redumpJson). "null" or "none", in any case, becomes null only where the schema allows something
 * other than a string (null, or any other type: `["string", "integer"]` too), as in vLLM's current
 * parser. Deliberate differences from vLLM, so that no value changes silently: a boolean that is
 * neither "true" nor "false"
 * stays text (vLLM makes it false), and a number written as an int keeps its digits (vLLM's
 * float() rounds 12345678901234567890 to 12345678901234567168). Without a schema every value
 * is text.
 */
export function convertParameter(raw: string, types: readonly string[] | undefined): TypedValue {
  const text = { value: raw, json: JSON.stringify(raw) };
  if (types === undefined) return text;
  const stringLike = types.some(isStringType);
  // "None": Python's null, which Qwen3.5's chat template writes; any case of either word, as vLLM's
  // `param_value.lower() in ("null", "none")` reads them ("none" stayed text here before). Where the
  // schema allows more than a string: a nullable type, or a union with another type. vLLM reads
  // `type: ["string", "integer"]` as no string type (str() of the list), so "null" is None there,
  // where it stayed "null" here; anyOf branches count the same, in any order (vLLM reads the first
  // non-null one only, so `anyOf: [string, integer]` keeps "null" there): a JSON-schema union is
  // unordered, and the same union should not read two ways for how it was written.
  const word = raw.trim().toLowerCase();
  if ((word === 'null' || word === 'none') && types.some((t) => !isStringType(t))) return { value: null, json: 'null' };
  if (stringLike) return text;
  const type = types.find((t) => t !== 'null') ?? 'string';
  if (['int', 'uint', 'long', 'short', 'unsigned'].some((prefix) => type.startsWith(prefix))) {
    // Digits of any script, as int() reads them (`٤٢` is 42).
    const trimmed = asciiDecimalDigits(raw.trim());
    if (!/^[+-]?\d+(?:_\d+)*$/.test(trimmed)) return text;
    return exactInt(trimmed.replaceAll('_', ''));
  }
  if (type.startsWith('num') || type.startsWith('float')) {
    const trimmed = asciiDecimalDigits(raw.trim());
    const ok = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(trimmed);
    if (!ok) return text;
    const digits = trimmed.replaceAll('_', '');
    // Written as an int, its digits are the model's, however many (vLLM's float() rounds them
    // past 2^53, and past 1.8e308 overflows, so that vLLM keeps the text).
    if (/^[+-]?\d+$/.test(digits)) return exactInt(digits);
    const value = Number(digits) + 0;
    // A float past 1.8e308 is inf to Python, which json.dumps writes as `Infinity` (no JSON): text, as vLLM keeps it.
    if (!Number.isFinite(value)) return text;
    if (!Number.isInteger(value)) return { value, json: pythonFloatJson(value) };
    // vLLM sends a whole float as an int (int(float(v))).
    return { value, json: BigInt(value).toString() };
  }
  if (type === 'boolean' || type === 'bool' || type === 'binary') {
    const word = raw.trim().toLowerCase();
    return word === 'true' ? { value: true, json: 'true' } : word === 'false' ? { value: false, json: 'false' } : text;
  }
  if (['object', 'array', 'arr'].includes(type) || type.startsWith('dict') || type.startsWith('list')) {
    // Else not JSON: models also write Python literals ({'a': True}).
    const json = redumpJson(raw);
    if (json !== undefined) return json;
  }
  return parsePythonLiteral(raw) ?? text;
}

/** An int of any size: its every digit in the JSON; the value a double, or the digits past 1.8e308 (see jsonNumberValue). */
function exactInt(digits: string): TypedValue {
  const json = pythonIntJson(digits);
  return { value: jsonNumberValue(json), json };
}

function isStringType(type: string): boolean {
  return ['string', 'str', 'text', 'varchar', 'char', 'enum'].includes(type);
}
