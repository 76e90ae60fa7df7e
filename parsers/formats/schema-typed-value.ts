import { z } from 'zod';
import { parsePythonLiteral } from './python-value-parser.ts';

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
      for (const [name, schema] of Object.entries(properties)) {
        const type = typeof schema === 'object' && schema !== null ? (schema as { type?: unknown }).type : undefined;
        const list = (Array.isArray(type) ? type : [type ?? 'string']).map((t) => String(t).trim().toLowerCase());
        types.set(name, list);
      }
    }
    byTool.set(tool.function.name, types);
  }
  return byTool;
}

/**
 * Converts a raw text parameter value (Qwen3-Coder XML) to the type the tool's schema gives it,
 * after vLLM's qwen3_coder rules: integers and numbers as Python's int()/float() read them,
 * objects and arrays as JSON, else as a Python literal; anything that does not convert stays
 * the text it was. Deliberate differences from vLLM, so that no value changes silently:
 * "null" becomes null only where the schema allows something other than a string (vLLM turns
 * every "null" into None, even for string parameters), and a boolean that is neither "true"
 * nor "false" stays text (vLLM makes it false). Without a schema every value is text.
 */
export function convertParameter(raw: string, types: readonly string[] | undefined): unknown {
  if (types === undefined) return raw;
  const stringLike = types.some(isStringType);
  if (raw.trim().toLowerCase() === 'null' && (types.includes('null') || !stringLike)) return null;
  if (stringLike) return raw;
  const type = types.find((t) => t !== 'null') ?? 'string';
  if (['int', 'uint', 'long', 'short', 'unsigned'].some((prefix) => type.startsWith(prefix))) {
    const text = raw.trim();
    return /^[+-]?\d+(?:_\d+)*$/.test(text) ? Number(text.replaceAll('_', '')) + 0 : raw;
  }
  if (type.startsWith('num') || type.startsWith('float')) {
    const text = raw.trim();
    const ok = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(text);
    const value = ok ? Number(text.replaceAll('_', '')) + 0 : Number.NaN;
    return Number.isFinite(value) ? value : raw;
  }
  if (type === 'boolean' || type === 'bool' || type === 'binary') {
    const text = raw.trim().toLowerCase();
    return text === 'true' ? true : text === 'false' ? false : raw;
  }
  if (['object', 'array', 'arr'].includes(type) || type.startsWith('dict') || type.startsWith('list')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      // Not JSON: models also write Python literals ({'a': True}).
    }
  }
  const literal = parsePythonLiteral(raw);
  return literal === undefined ? raw : literal.value;
}

function isStringType(type: string): boolean {
  return ['string', 'str', 'text', 'varchar', 'char', 'enum'].includes(type);
}
