import { z } from 'zod';
import type { Piece } from '../parsers/parser-events.ts';
import { splitPatterns } from './client-schema-patterns.ts';

interface ArgumentCheck {
  schema: z.ZodType;
  /** `pattern`s, checked in linear time (client-schema-patterns.ts). */
  patterns: (value: unknown) => string | undefined;
}

/**
 * Early schema checks for calls the client executes itself (request extension
 * `validate_tool_arguments`): each top-level argument is checked against its JSON Schema the
 * moment its value closes, so a bad call is cut short while the model is still writing it.
 * Whatever cannot be checked safely is the client's to check, as without this extension.
 */
export class ClientToolValidator {
  private readonly byTool = new Map<string, Map<string, ArgumentCheck>>();

  constructor(tools: ReadonlyArray<{ type: string; function?: { name: string; parameters?: unknown } }>) {
    for (const tool of tools) {
      const params = tool.function?.parameters as { properties?: Record<string, unknown> } | undefined;
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
      this.byTool.set(tool.function.name, checks);
    }
  }

  /** The reason the piece is invalid for `tool`, or undefined when it passes (or is not checked). */
  check(tool: string, piece: Piece): string | undefined {
    if (piece.kind !== 'field' || piece.path.length !== 1) return undefined;
    const name = String(piece.path[0]);
    const checks = this.byTool.get(tool);
    const argument = checks?.get(name);
    if (!argument) return undefined;
    let problem: string | undefined;
    try {
      const result = argument.schema.safeParse(piece.value);
      problem = result.success ? argument.patterns(piece.value) : z.prettifyError(result.error);
    } catch {
      // zod could read the schema but not check it (a `$ref` to itself recurses without end).
      checks!.delete(name);
      return undefined;
    }
    return problem === undefined ? undefined : `argument "${name}" of ${tool}: ${problem.replaceAll('\n', ' ')}`;
  }
}
