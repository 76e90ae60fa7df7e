import type { z } from 'zod';
import { definePlugin, reject, type PluginContext, type PluginDefinition } from '../kit/define-plugin.ts';
import type { ToolResult } from '../plugin-types.ts';
import { fieldLabel, fieldSchemaAt, refinementKey, refinementPathProblem } from './field-schema.ts';

/** A custom check on one field's value (already valid for its schema, and as the schema outputs it: trimmed, defaulted): a message rejects the call. */
export type Refinement = (value: unknown) => string | undefined | void;

export interface ValidatingToolOptions<S extends z.ZodType> {
  name: string;
  description?: string;
  /** The arguments schema: each field is checked against its part of it as soon as it is decoded. */
  schema: S;
  /** Extra checks by field path, array indices as `*`: `{ location: …, 'stops.*.city': … }`. */
  refinements?: Record<string, Refinement>;
  /** Does the work once the call is whole and valid; default: returns the validated arguments as JSON (a client-side tool). */
  run?: (args: z.output<S>, ctx: PluginContext) => ToolResult | string | Promise<ToolResult | string>;
}

/**
 * Why the value decoded at `path` makes the call invalid, or undefined: its schema first (an
 * unknown key of a strict object counts), then the refinement registered for the path.
 */
export function checkField(schema: z.ZodType, refinements: Record<string, Refinement>, path: ReadonlyArray<string | number>, value: unknown): string | undefined {
  const field = fieldSchemaAt(schema, path);
  if (field.kind === 'unknown-key') return `${fieldLabel(path)}: unexpected field (expected one of the schema's properties)`;
  // The refinement sees the value as the schema makes it (trimmed, defaulted, transformed), as
  // onEnd's second pass over the parsed arguments does: the same verdict streamed or whole.
  let checked = value;
  if (field.kind === 'schema') {
    const parsed = field.schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return `${fieldLabel([...path, ...(issue.path as Array<string | number>)])}: ${issue.message}`;
    }
    checked = parsed.data;
  }
  const message = refinements[refinementKey(path)]?.(checked);
  return message ? `${fieldLabel(path)}: ${message}` : undefined;
}

/**
 * Runs every refinement over the whole arguments (the same verdicts when no pieces were streamed):
 * each value is matched by its path's refinementKey, as a streamed field is, and visited in the
 * order its field would close (children before the object or array holding them). Splitting a
 * key at its dots instead missed a field whose name holds one (`'user.name'`).
 */
function checkRefinements(refinements: Record<string, Refinement>, args: unknown): string | undefined {
  const visit = (value: unknown, path: Array<string | number>): string | undefined => {
    if (value !== null && typeof value === 'object') {
      const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
      for (const [key, child] of entries) {
        const found = visit(child, [...path, key]);
        if (found !== undefined) return found;
      }
    }
    if (path.length === 0) return undefined;
    const message = refinements[refinementKey(path)]?.(value);
    return message ? `${fieldLabel(path)}: ${message}` : undefined;
  };
  return Object.keys(refinements).length === 0 ? undefined : visit(args, []);
}

/**
 * A tool whose arguments are validated field by field while they are decoded: the first field
 * that fails its schema or a refinement rejects the call at once (the Session cuts the decode
 * and reports or re-prompts), instead of after the model has written the whole call.
 *
 * @example
 * const localNews = createValidatingTool({
 *   name: 'local_news',
 *   schema: z.object({ location: z.string(), topic: z.string().optional() }),
 *   refinements: { location: (v) => (/^[A-Z][A-Za-z .'-]+, [A-Z]{2}$/.test(String(v)) ? undefined : 'must be "City, ST"') },
 * });
 */
export function createValidatingTool<S extends z.ZodType>(options: ValidatingToolOptions<S>): PluginDefinition<S> {
  const refinements = options.refinements ?? {};
  for (const key of Object.keys(refinements)) {
    const problem = refinementPathProblem(options.schema, key);
    if (problem !== undefined) throw new TypeError(`plugin ${options.name}: refinements['${key}'] names no field of the schema: ${problem}`);
  }
  return definePlugin({
    name: options.name,
    description: options.description ?? options.schema.description ?? `Calls ${options.name} with validated arguments.`,
    parameters: options.schema,
    consumes: 'field',
    runtime: 'inline',
    hooks: {
      onPiece(piece) {
        if (piece.kind !== 'field') return;
        const reason = checkField(options.schema, refinements, piece.path, piece.value);
        return reason === undefined ? undefined : reject(reason);
      },
      async onEnd(args, ctx) {
        const reason = checkRefinements(refinements, args);
        if (reason !== undefined) return { ok: false, content: `error: ${reason}` };
        if (options.run) return options.run(args, ctx);
        return { ok: true, content: JSON.stringify(args), data: { args: args as Record<string, unknown> } };
      },
    },
  });
}
