import { z } from 'zod';
import { FUNCTION_NAME, FUNCTION_NAME_RULE } from '../../core/function-name.ts';
import { MAX_TIMER_MS, MAX_TIMER_MS_RULE } from '../../core/max-timer-ms.ts';
import { describeValue as describe } from './describe-value.ts';
import { lineFieldOf, nullableStringFields, stringFields } from './line-field.ts';

const RUNTIMES = ['inline', 'thread', 'isolate', 'process'];
const CONSUMES = ['line', 'field', 'step', 'call'];
const HOOKS = ['onLoad', 'onStart', 'onPiece', 'onAbort'];
const LIMITS = ['timeoutMs', 'memoryMb', 'cpuSeconds', 'fileSizeMb', 'maxProcesses'];
const KEYS = ['name', 'description', 'parameters', 'consumes', 'lineField', 'runtime', 'sideEffects', 'reuseProcess', 'limits', 'hooks'];
/** defineCommandPlugin's keys: a program in another language instead of hooks (reuse needs the JS host's CPU report). */
const COMMAND_KEYS = [...KEYS.filter((k) => k !== 'hooks' && k !== 'reuseProcess'), 'command'];
const COMMAND_HINT = "a plugin in another language names the program that runs it instead: defineCommandPlugin({ …, command: ['/usr/bin/python3', '/abs/plugin.py'] }) (plugins/README.md \"Other languages\")";
/**
 * The limits each runtime applies (tool-from-plugin.ts): the call clock everywhere; `isolate` sizes
 * each guest isolate by memoryMb (its host process has the pool's rlimits, not the plugin's: the
 * rest would hold only where it falls back to `process`, so on one machine and not another);
 * only `process` turns them all into rlimits. `thread` workers share the pool's heap limit.
 */
const HONOURED: Record<string, readonly string[]> = {
  inline: ['timeoutMs'],
  thread: ['timeoutMs'],
  isolate: ['timeoutMs', 'memoryMb'],
  process: LIMITS,
};
const PARAMETERS_HINT = "parameters must be a zod 4 object schema (import { z } from 'zod') whose fields JSON Schema can describe";

/**
 * What is wrong with a plugin definition, or undefined: checked by definePlugin (`kind` 'plugin':
 * JS hooks), defineCommandPlugin ('command': a program in another language) and again where a
 * module's default export is loaded ('either': a command plugin when it has a command and no
 * hooks), so a typo (`runtime: 'proces'`, `consumes: 'fields'`) or a JSON Schema where a zod schema
 * belongs is an error naming the field at start-up, not a tool that silently never gets a piece or
 * fails every call.
 */
export function definitionProblem(value: unknown, kind: 'plugin' | 'command' | 'either' = 'either'): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected the object definePlugin(...) returns, got ${describe(value)}`;
  // `export default [definePlugin(…), …]`: one module is one plugin (the same file serves several through a query).
  if (Array.isArray(value)) return `expected the object definePlugin(...) returns, got an array: a module exports one plugin as its default; for several, use one module each, or one module with a query that picks the plugin (--tool 'my-plugin.ts?name=a')`;
  const d = value as Record<string, unknown>;
  const command = kind === 'command' || (kind === 'either' && d['hooks'] === undefined && 'command' in d);
  if (command && d['hooks'] !== undefined) return `a plugin with a command has no hooks (its code is the command's program); a JS plugin is definePlugin({ …, hooks })`;
  if (!command && d['command'] !== undefined) return `command is for a plugin in another language, declared with defineCommandPlugin({ …, command }); definePlugin's run their hooks`;
  // A misspelt key would otherwise fall back to its default without a word: `limits: { timeout }`
  // runs with 30 s, a top-level `runtimes: 'process'` runs inline, outside the sandbox.
  // A hook written beside name and parameters (`onEnd: …` at the top) is the likeliest unknown key: say where it goes.
  const hookAtTop = Object.keys(d).find((k) => [...HOOKS, 'onEnd'].includes(k));
  if (hookAtTop !== undefined) {
    // A command plugin has no hooks at all: "go inside hooks" was then refused as "has no hooks".
    if (command) return `unknown key '${hookAtTop}': a plugin with a command has no hooks (its program answers each call on fd 3: plugins/README.md "Other languages"); a JS plugin is definePlugin({ …, hooks: { ${hookAtTop} } })`;
    return `unknown key '${hookAtTop}': hooks go inside hooks (hooks: { ${hookAtTop}: … })`;
  }
  if (command && d['reuseProcess'] !== undefined) {
    return 'reuseProcess is for JS plugins (definePlugin): the gateway keeps a process for more calls only while it knows the CPU time it used, which the JS plugin host reports; a command plugin gets a fresh process per call';
  }
  const unknownTop = unknownKey(d, command ? COMMAND_KEYS : KEYS, '');
  if (unknownTop !== undefined) return unknownTop;
  if (typeof d['name'] !== 'string' || !FUNCTION_NAME.test(d['name'])) {
    return `name ${JSON.stringify(d['name'])} must be ${FUNCTION_NAME_RULE}`;
  }
  if (typeof d['description'] !== 'string') return `description must be a string, got ${describe(d['description'])}`;
  // The model picks a tool, and writes its arguments, from this text alone.
  if (d['description'].trim() === '') return `description is empty: say what the tool does and when to call it (the model reads only this and the parameters' descriptions)`;
  if (typeof (d['parameters'] as { safeParse?: unknown } | null)?.safeParse !== 'function') {
    return `parameters must be a zod schema (z.object({...})), got ${describe(d['parameters'])}; the JSON Schema sent upstream is made from it`;
  }
  const noJsonSchema = jsonSchemaProblem(d['parameters'] as z.ZodType);
  if (noJsonSchema !== undefined) return noJsonSchema;
  const type = (z.toJSONSchema(d['parameters'] as z.ZodType, { io: 'input' }) as { type?: unknown }).type;
  if (type !== 'object') return notAnObject(d['parameters'] as z.ZodType);
  // Left out, it has no default to fall back on: say what each value means, not only that undefined is wrong.
  if (d['consumes'] === undefined) return `consumes is missing: say which pieces onPiece gets as the model writes the call, 'line', 'field' or 'step', or 'call' for none (onEnd alone, with the whole call)`;
  if (!CONSUMES.includes(d['consumes'] as string)) return `consumes must be one of ${CONSUMES.join(', ')}, got ${describe(d['consumes'])}`;
  if (d['runtime'] !== undefined && !RUNTIMES.includes(d['runtime'] as string)) return `runtime must be one of ${RUNTIMES.join(', ')}, got ${describe(d['runtime'])}`;
  if (command && d['runtime'] !== undefined && d['runtime'] !== 'process') return `a plugin with a command runs in runtime "process" only (or leave runtime out), got ${describe(d['runtime'])}`;
  // Only a `line` plugin is fed lines: elsewhere lineField would be read as a promise the gateway never keeps.
  if (d['lineField'] !== undefined && d['consumes'] !== 'line') {
    return `lineField is for consumes "line" only (the string argument whose lines are the pieces), got consumes ${describe(d['consumes'])}`;
  }
  // A declaration that whatever reads it tests for truth: 'false' would read as true, and 'yes' says nothing typed code can rely on.
  if (d['sideEffects'] !== undefined && typeof d['sideEffects'] !== 'boolean') {
    return `sideEffects must be true or false (true when onEnd changes the world), got ${describe(d['sideEffects'])}`;
  }
  if (d['reuseProcess'] !== undefined && typeof d['reuseProcess'] !== 'boolean') {
    return `reuseProcess must be true or false (true: a process that answered a call serves the plugin's next calls), got ${describe(d['reuseProcess'])}`;
  }
  // Only `process` starts a process per call; elsewhere the promise would be one nothing keeps.
  if (d['reuseProcess'] === true && d['runtime'] !== 'process') {
    return `reuseProcess is for runtime "process" (a fresh process per call unless it is set), got runtime ${describe(d['runtime'] ?? 'inline')}; the thread and isolate runtimes reuse their workers and host already`;
  }
  if (d['consumes'] === 'line' && lineFieldOf(d as { consumes: string; parameters: z.ZodType; lineField?: unknown }) === undefined) {
    // Name the fields that would do, so the fix is a copy away (or say there is none: the schema is then what to change).
    const strings = stringFields(d['parameters'] as z.ZodType);
    // A nullable string is a string to its author: say why it does not count, or the list reads wrong.
    const nullable = nullableStringFields(d['parameters'] as z.ZodType).map((name) => `${JSON.stringify(name)} may also be null, which has no lines: make it z.string()`);
    const choices = (strings.length === 0 ? 'parameters has no string field' : `its string fields: ${strings.map((name) => JSON.stringify(name)).join(', ')}`) + (nullable.length === 0 ? '' : `${strings.length === 0 ? ':' : ';'} ${nullable.join('; ')}`);
    return d['lineField'] === undefined
      ? `consumes "line" needs lineField, the string argument whose lines are the pieces (it can be left out only when the arguments have one string field; ${choices})`
      : `lineField ${describe(d['lineField'])} is not a string field of parameters (${choices})`;
  }
  // The plugin's code: its hooks, or the program that runs it.
  const codeProblem = command ? commandProblem(d['command']) : hooksProblem(d['hooks']);
  if (codeProblem !== undefined) return codeProblem;
  // A `call` plugin is fed no pieces: its onPiece would be a check that silently never runs.
  if (!command && d['consumes'] === 'call' && (d['hooks'] as Record<string, unknown>)['onPiece'] !== undefined) {
    return `hooks.onPiece is never called for consumes "call" (onEnd gets the whole call at once); to see the call as the model writes it, consume 'field', 'line' or 'step'`;
  }
  const limits = d['limits'] as Record<string, unknown> | undefined;
  if (limits !== undefined && (typeof limits !== 'object' || limits === null || Array.isArray(limits))) return `limits must be an object, got ${describe(limits)}`;
  const unknownLimit = limits === undefined ? undefined : unknownKey(limits, LIMITS, 'limits');
  if (unknownLimit !== undefined) return unknownLimit;
  for (const limit of LIMITS) {
    const v = limits?.[limit];
    // An inline plugin whose work another boundary bounds (the python tool's sandbox) says 0: none.
    if (limit === 'timeoutMs' && v === 0 && !command && (d['runtime'] ?? 'inline') === 'inline') continue;
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) return `limits.${limit} must be a positive number, got ${describe(v)}`;
    if (limit === 'timeoutMs' && typeof v === 'number' && v > MAX_TIMER_MS) return `limits.timeoutMs must be ${MAX_TIMER_MS_RULE}, got ${describe(v)}`;
    // setrlimit and V8's --max-old-space-size take whole numbers: a fraction passed here, and every call then failed to start.
    if (limit !== 'timeoutMs' && typeof v === 'number' && !Number.isInteger(v)) {
      return `limits.${limit} must be a whole number, at least 1 (the sandbox sets it as an rlimit or a heap size), got ${describe(v)}`;
    }
  }
  return limits === undefined ? undefined : ignoredLimit(limits, command ? 'process' : (d['runtime'] as string | undefined));
}

/** What is wrong with a JS plugin's hooks (onEnd required), or undefined. */
function hooksProblem(hooks: unknown): string | undefined {
  // Left out, it may be a plugin in another language written with the wrong helper: say which one it wants.
  if (hooks === undefined) return `hooks must be an object with at least onEnd, got undefined; ${COMMAND_HINT}`;
  if (typeof hooks !== 'object' || hooks === null) return `hooks must be an object with at least onEnd, got ${describe(hooks)}`;
  const h = hooks as Record<string, unknown>;
  const unknownHook = unknownKey(h, [...HOOKS, 'onEnd'], 'hooks');
  if (unknownHook !== undefined) return unknownHook;
  if (typeof h['onEnd'] !== 'function') return `hooks.onEnd must be a function (it does the call's work), got ${describe(h['onEnd'])}`;
  const bad = HOOKS.find((hook) => h[hook] !== undefined && typeof h[hook] !== 'function');
  return bad === undefined ? undefined : `hooks.${bad} must be a function, got ${describe(h[bad])}`;
}

/** What is wrong with a command plugin's command (it may be left out, for toolFromPlugin's options to give), or undefined. */
function commandProblem(command: unknown): string | undefined {
  if (command === undefined || (Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string' && a !== ''))) return undefined;
  return `command must be the program and its arguments, a non-empty array of strings (['/usr/bin/python3', '/abs/plugin.py']), got ${describe(command)}`;
}

/**
 * A limit the plugin's runtime would ignore, as a problem naming the runtime and what it does
 * honour: `memoryMb: 128` on a thread plugin ran with the pool's heap limit without a word. A
 * plugin that names no runtime runs `inline`, so it is refused too: the author most likely left
 * out `runtime: 'process'`, and a limit that holds nowhere is no limit.
 */
function ignoredLimit(limits: Record<string, unknown>, named: string | undefined): string | undefined {
  const runtime = named ?? 'inline';
  const honoured = HONOURED[runtime] ?? LIMITS;
  const limit = LIMITS.find((l) => limits[l] !== undefined && !honoured.includes(l));
  if (limit === undefined) return undefined;
  const which = named === undefined ? 'runtime "inline" (the default: the plugin names no runtime)' : `runtime "${runtime}"`;
  const instead = runtime === 'thread' && limit === 'memoryMb' ? ' (its workers share the pool\'s heap limit, createRuntimePools({ thread: { maxOldGenerationSizeMb } }))' : '';
  const elsewhere = RUNTIMES.filter((r) => HONOURED[r]?.includes(limit)).map((r) => `"${r}"`).join(' or ');
  return `limits.${limit} is ignored by ${which}, which honours only ${honoured.join(', ')}${instead}; it applies in runtime ${elsewhere}`;
}

/**
 * "parameters must be an object schema", saying what the schema is (`a union`, `a string`): the
 * JSON Schema type alone was "unknown" for a union, which names no type.
 */
function notAnObject(schema: z.ZodType): string {
  const kind = schemaKind(schema);
  // The object inside is right; its JSON Schema is `anyOf: [object, null]`, and "got an object" read as a contradiction.
  if (kind === 'an object' && wrapperTypes(schema).includes('nullable')) {
    return "parameters must be an object schema (z.object({...})), got a nullable object (z.object({...}).nullable()); a tool's arguments are always one object: leave out .nullable()";
  }
  // OpenAI function parameters are one JSON object; alternatives go inside it.
  const union = kind.includes('union') ? ' (for alternative sets of arguments, one z.object whose fields are optional, or a union inside a field)' : '';
  return `parameters must be an object schema (z.object({...})), got ${kind}; a tool's arguments are named fields${union}`;
}

/** What kind of zod schema this is, in words, seen through optional/default/pipe wrappers. */
function schemaKind(schema: z.ZodType): string {
  // Read from the definition, not `instanceof`: an author's own copy of zod is another class.
  let def = (schema as { _zod?: { def?: ZodDef } })._zod?.def;
  for (let i = 0; i < 8 && def && (def.innerType ?? def.in); i++) def = (def.innerType ?? def.in)?._zod?.def;
  const type = typeof def?.type === 'string' ? def.type : undefined;
  if (type === undefined) return 'a schema of unknown type';
  if (type === 'union') return def?.discriminator === undefined ? 'a union' : 'a discriminated union';
  if (type === 'any' || type === 'unknown' || type === 'null') return `z.${type}()`;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** The wrappers around a schema, outermost first (`nullable`, `optional`, …). */
function wrapperTypes(schema: z.ZodType): string[] {
  const types: string[] = [];
  let def = (schema as { _zod?: { def?: ZodDef } })._zod?.def;
  for (let i = 0; i < 8 && def && (def.innerType ?? def.in); i++) {
    if (typeof def.type === 'string') types.push(def.type);
    def = (def.innerType ?? def.in)?._zod?.def;
  }
  return types;
}

interface ZodDef {
  type?: unknown;
  discriminator?: unknown;
  innerType?: { _zod?: { def?: ZodDef } };
  in?: { _zod?: { def?: ZodDef } };
}

/**
 * Why `schema` has no JSON Schema to send upstream (a zod 3 schema, a `z.date()` field, a
 * transform's output), naming the field where one is to blame; undefined when it has one.
 */
function jsonSchemaProblem(schema: z.ZodType): string | undefined {
  if (!('_zod' in schema)) return `parameters is not a zod 4 schema (a zod 3 one, from 'zod/v3' or zod < 4?); ${PARAMETERS_HINT}`;
  const problem = (s: z.ZodType): string | undefined => {
    try {
      z.toJSONSchema(s, { io: 'input' });
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  };
  const whole = problem(schema);
  if (whole === undefined) return undefined;
  const field = culprit(schema, [], problem);
  const where = field ? `field '${field.path.join('.')}' has no JSON Schema (${field.problem})` : `it has no JSON Schema (${whole})`;
  return `parameters: ${where}; ${PARAMETERS_HINT}`;
}

/** The innermost object field whose schema has no JSON Schema, depth first. */
function culprit(schema: z.ZodType, path: string[], problem: (s: z.ZodType) => string | undefined): { path: string[]; problem: string } | undefined {
  // Read from the definition, not `instanceof z.ZodObject`: an author's own copy of zod is another class.
  const def = (schema as { _zod?: { def?: { type?: unknown; shape?: Record<string, z.ZodType> } } })._zod?.def;
  if (def?.type !== 'object' || !def.shape) return undefined;
  for (const [key, field] of Object.entries(def.shape)) {
    const found = problem(field);
    if (found !== undefined) return culprit(field, [...path, key], problem) ?? { path: [...path, key], problem: found };
  }
  return undefined;
}

/**
 * The first key of `object` not among `known`, as a one-line problem naming the key meant where
 * one is close (a different case, a letter or two off, a prefix: `timeout` for `timeoutMs`).
 */
function unknownKey(object: Record<string, unknown>, known: readonly string[], where: string): string | undefined {
  const key = Object.keys(object).find((k) => !known.includes(k));
  if (key === undefined) return undefined;
  const meant = closest(key, known);
  return `unknown key '${key}'${where ? ` in ${where}` : ''}${meant ? ` (did you mean '${meant}'?)` : ` (known: ${known.join(', ')})`}`;
}

function closest(key: string, known: readonly string[]): string | undefined {
  const k = key.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const n = name.toLowerCase();
    const distance = n.startsWith(k) || k.startsWith(n) ? Math.abs(n.length - k.length) : editDistance(k, n);
    if (distance <= Math.max(2, Math.floor(n.length / 3)) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}
