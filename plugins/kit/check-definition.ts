import { z } from 'zod';
import type { ToolResult } from '../plugin-types.ts';

const RUNTIMES = ['inline', 'thread', 'isolate', 'process'];
const CONSUMES = ['line', 'field', 'step', 'call'];
const HOOKS = ['onLoad', 'onStart', 'onPiece', 'onAbort'];
const LIMITS = ['timeoutMs', 'memoryMb', 'cpuSeconds', 'fileSizeMb', 'maxProcesses'];

/**
 * What is wrong with a plugin definition, or undefined: checked by definePlugin and again where a
 * module's default export is loaded, so a typo (`runtime: 'proces'`, `consumes: 'fields'`) or a
 * JSON Schema where a zod schema belongs is an error naming the field at start-up, not a tool that
 * silently never gets a piece or fails every call.
 */
export function definitionProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected the object definePlugin(...) returns, got ${describe(value)}`;
  const d = value as Record<string, unknown>;
  if (typeof d['name'] !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(d['name'])) {
    return `name ${JSON.stringify(d['name'])} must be 1-64 letters, digits, "_" or "-" (OpenAI function-name rules)`;
  }
  if (typeof d['description'] !== 'string') return `description must be a string, got ${describe(d['description'])}`;
  if (typeof (d['parameters'] as { safeParse?: unknown } | null)?.safeParse !== 'function') {
    return `parameters must be a zod schema (z.object({...})), got ${describe(d['parameters'])}; the JSON Schema sent upstream is made from it`;
  }
  const type = jsonSchemaType(d['parameters'] as z.ZodType);
  if (type !== 'object') return `parameters must describe an object (a tool's arguments are named fields), got a schema of type ${type}`;
  if (!CONSUMES.includes(d['consumes'] as string)) return `consumes must be one of ${CONSUMES.join(', ')}, got ${describe(d['consumes'])}`;
  if (d['runtime'] !== undefined && !RUNTIMES.includes(d['runtime'] as string)) return `runtime must be one of ${RUNTIMES.join(', ')}, got ${describe(d['runtime'])}`;
  if (d['consumes'] === 'line' && lineFieldOf(d as { consumes: string; parameters: z.ZodType; lineField?: unknown }) === undefined) {
    return d['lineField'] === undefined
      ? 'consumes "line" needs lineField, the string argument whose lines are the pieces (it can be left out only when the arguments have one string field)'
      : `lineField ${describe(d['lineField'])} is not a string field of parameters`;
  }
  const hooks = d['hooks'] as Record<string, unknown> | undefined;
  if (typeof hooks !== 'object' || hooks === null) return `hooks must be an object with at least onEnd, got ${describe(hooks)}`;
  if (typeof hooks['onEnd'] !== 'function') return `hooks.onEnd must be a function (it does the call's work), got ${describe(hooks['onEnd'])}`;
  for (const hook of HOOKS) {
    if (hooks[hook] !== undefined && typeof hooks[hook] !== 'function') return `hooks.${hook} must be a function, got ${describe(hooks[hook])}`;
  }
  const limits = d['limits'] as Record<string, unknown> | undefined;
  for (const limit of LIMITS) {
    const v = limits?.[limit];
    // An inline plugin whose work another boundary bounds (the python tool's sandbox) says 0: none.
    if (limit === 'timeoutMs' && v === 0 && (d['runtime'] ?? 'inline') === 'inline') continue;
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) return `limits.${limit} must be a positive number, got ${describe(v)}`;
  }
  return undefined;
}

/**
 * The argument a `line` plugin's pieces are the lines of: `lineField` when it names a string field
 * of the arguments, else their one string field; undefined for any other plugin, or when neither
 * holds.
 */
export function lineFieldOf(definition: { consumes: string; parameters: z.ZodType; lineField?: unknown }): string | undefined {
  if (definition.consumes !== 'line') return undefined;
  let properties: Record<string, { type?: unknown }>;
  try {
    properties = ((z.toJSONSchema(definition.parameters, { io: 'input' }) as { properties?: Record<string, { type?: unknown }> }).properties ?? {});
  } catch {
    return undefined;
  }
  const strings = Object.keys(properties).filter((name) => properties[name]?.type === 'string');
  if (definition.lineField !== undefined) return typeof definition.lineField === 'string' && strings.includes(definition.lineField) ? definition.lineField : undefined;
  return strings.length === 1 ? strings[0] : undefined;
}

/**
 * What onEnd returned, as the result the model sees: a string is a success; `{ ok, content }`
 * passes as it is; anything else is the plugin's error, said as such, not an empty observation.
 */
export function toolResultOf(plugin: string, value: unknown): ToolResult {
  if (typeof value === 'string') return { ok: true, content: value };
  const r = value as Partial<ToolResult> | null | undefined;
  if (typeof r === 'object' && r !== null && typeof r.ok === 'boolean' && typeof r.content === 'string') {
    if (r.data === undefined || (typeof r.data === 'object' && r.data !== null)) return r as ToolResult;
  }
  return { ok: false, content: `error: ${plugin}'s onEnd returned ${describe(value)}, not a string or { ok, content }` };
}

function jsonSchemaType(schema: z.ZodType): string {
  try {
    const type = (z.toJSONSchema(schema, { io: 'input' }) as { type?: unknown }).type;
    return typeof type === 'string' ? type : 'unknown';
  } catch {
    // A schema with no JSON Schema form (a transform's output, a custom type) cannot be sent upstream.
    return 'that has no JSON Schema';
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'object' ? 'an object' : typeof value;
}
