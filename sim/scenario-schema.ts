import { z } from 'zod';

/** Variables a reply template may use; anything else in `{{...}}` is rejected at load time. */
export const TEMPLATE_VARIABLES = ['tool_output', 'tool_output_last_line', 'tool_output_last_observation', 'last_user', 'round'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

const TEMPLATE_RE = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

/** A bare string is a case-insensitive substring test. */
const textMatchSchema = z.union([
  z.string().min(1),
  z.strictObject({ contains: z.string().min(1), caseSensitive: z.boolean().optional() }),
  z.strictObject({ regex: z.string().min(1), flags: z.string().regex(/^[imsu]*$/).optional() }),
]);

const roundSchema = z.union([
  z.number().int().positive(),
  z.strictObject({ min: z.number().int().positive().optional(), max: z.number().int().positive().optional() }),
]);

const replySchema = z
  .union([z.string(), z.array(z.string())])
  .transform((reply) => (Array.isArray(reply) ? reply.join('\n') : reply))
  .superRefine((reply, ctx) => {
    for (const match of reply.matchAll(TEMPLATE_RE)) {
      if (!(TEMPLATE_VARIABLES as readonly string[]).includes(match[1]!)) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown template variable {{${match[1]}}}; known: ${TEMPLATE_VARIABLES.join(', ')}`,
        });
      }
    }
  });

const ruleSchema = z.strictObject({
  /** All given conditions must hold; an empty `when` matches every conversation. */
  when: z
    .strictObject({
      lastUser: textMatchSchema.optional(),
      round: roundSchema.optional(),
      lastRole: z.enum(['user', 'tool', 'assistant', 'system']).optional(),
      /** Only when the request named this scenario (model `sim-<name>` or body `scenario`). */
      explicit: z.boolean().optional(),
    })
    .default({}),
  /** The assistant's text; an array is joined with "\n" so code stays readable in JSON. */
  reply: replySchema,
});

export const scenarioSchema = z.strictObject({
  /** Selects the scenario explicitly: body field `scenario`, or model `sim-<name>`. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only'),
  description: z.string().optional(),
  rules: z.array(ruleSchema).min(1),
});

/** A scenario as written (in a JSON file or passed in memory); see sim/README.md. */
export type Scenario = z.input<typeof scenarioSchema>;
/** A validated scenario: defaults filled in, replies joined into one string. */
export type ParsedScenario = z.output<typeof scenarioSchema>;
export type ScenarioRule = ParsedScenario['rules'][number];
export type TextMatch = z.output<typeof textMatchSchema>;

export function templateVariablePattern(): RegExp {
  return new RegExp(TEMPLATE_RE.source, 'g');
}
