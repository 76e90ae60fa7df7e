import { z } from 'zod';
import type { Piece } from '../parsers/parser-events.ts';

/**
 * Early schema checks for calls the client executes itself (request extension
 * `validate_tool_arguments`): each top-level argument is checked against its JSON Schema the
 * moment its value closes, so a bad call is cut short while the model is still writing it.
 */
export class ClientToolValidator {
  private readonly byTool = new Map<string, Map<string, z.ZodType>>();

  constructor(tools: ReadonlyArray<{ type: string; function?: { name: string; parameters?: unknown } }>) {
    for (const tool of tools) {
      const params = tool.function?.parameters as { properties?: Record<string, unknown> } | undefined;
      if (!tool.function || !params?.properties) continue;
      const checks = new Map<string, z.ZodType>();
      for (const [name, schema] of Object.entries(params.properties)) {
        try {
          checks.set(name, z.fromJSONSchema(schema as never));
        } catch {
          // A schema zod cannot read is checked by the client, as without this extension.
        }
      }
      this.byTool.set(tool.function.name, checks);
    }
  }

  /** The reason the piece is invalid for `tool`, or undefined when it passes (or is not checked). */
  check(tool: string, piece: Piece): string | undefined {
    if (piece.kind !== 'field' || piece.path.length !== 1) return undefined;
    const name = String(piece.path[0]);
    const schema = this.byTool.get(tool)?.get(name);
    if (!schema) return undefined;
    const result = schema.safeParse(piece.value);
    return result.success ? undefined : `argument "${name}" of ${tool}: ${z.prettifyError(result.error).replaceAll('\n', ' ')}`;
  }
}
