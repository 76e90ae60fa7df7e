import { z } from 'zod';
import type { Piece } from '../parsers/parser-events.ts';
import { splitPatterns } from './client-schema-patterns.ts';

interface ArgumentCheck {
  schema: z.ZodType;
  /** `pattern`s, checked in linear time (client-schema-patterns.ts). */
  patterns: (value: unknown) => string | undefined;
}

interface ToolChecks {
  /** Per top-level argument whose schema zod reads. */
  arguments: Map<string, ArgumentCheck>;
  /** The names the schema declares (own properties: `constructor` is a name like any other). */
  declared: ReadonlySet<string>;
  /** The schema's `required` names, checked when the call ends. */
  required: readonly string[];
  /** `additionalProperties: false`: an argument the schema does not declare is refused as it closes. */
  closed: boolean;
}

/**
 * Early schema checks for calls the client executes itself (request extension
 * `validate_tool_arguments`): each top-level argument is checked against its JSON Schema the
 * moment its value closes (and one the schema does not declare, under `additionalProperties:
 * false`), so a bad call is cut short while the model is still writing it; `required` is checked
 * when the call ends. Whatever cannot be checked safely is the client's to check, as without
 * this extension.
 */
export class ClientToolValidator {
  private readonly byTool = new Map<string, ToolChecks>();

  constructor(tools: ReadonlyArray<{ type: string; function?: { name: string; parameters?: unknown } }>) {
    for (const tool of tools) {
      const params = tool.function?.parameters as { properties?: Record<string, unknown>; required?: unknown; additionalProperties?: unknown } | undefined;
      if (!tool.function || !params?.properties) continue;
      const checks = new Map<string, ArgumentCheck>();
      for (const [name, property] of Object.entries(params.properties)) {
        try {
          const { schema, check } = splitPatterns(property);
          checks.set(name, { schema: z.fromJSONSchema(schema as never), patterns: check });
        } catch {
          // A schema zod cannot read.
        }
      }
      this.byTool.set(tool.function.name, {
        arguments: checks,
        declared: new Set(Object.keys(params.properties)),
        required: Array.isArray(params.required) ? params.required.filter((r): r is string => typeof r === 'string') : [],
        closed: params.additionalProperties === false,
      });
    }
  }

  /** The reason the piece is invalid for `tool`, or undefined when it passes (or is not checked). */
  check(tool: string, piece: Piece): string | undefined {
    if (piece.kind !== 'field' || piece.path.length !== 1) return undefined;
    const name = String(piece.path[0]);
    const checks = this.byTool.get(tool);
    if (!checks) return undefined;
    if (checks.closed && !checks.declared.has(name)) return `argument "${name}" of ${tool}: not one the schema declares (additionalProperties is false)`;
    const argument = checks.arguments.get(name);
    if (!argument) return undefined;
    let problem: string | undefined;
    try {
      const result = argument.schema.safeParse(piece.value);
      problem = result.success ? argument.patterns(piece.value) : z.prettifyError(result.error);
    } catch {
      // zod could read the schema but not check it (a `$ref` to itself recurses without end).
      checks.arguments.delete(name);
      return undefined;
    }
    return problem === undefined ? undefined : `argument "${name}" of ${tool}: ${problem.replaceAll('\n', ' ')}`;
  }

  /** The reason the whole call is invalid for `tool` (a required argument missing), or undefined. */
  checkEnd(tool: string, args: Record<string, unknown>): string | undefined {
    const missing = this.byTool.get(tool)?.required.filter((name) => !Object.hasOwn(args, name)) ?? [];
    if (missing.length === 0) return undefined;
    return `${tool} is missing its required argument${missing.length > 1 ? 's' : ''} ${missing.map((name) => `"${name}"`).join(', ')}`;
  }
}
