import { z } from 'zod';
import { resolveParserFormat } from '../parsers/format-names.ts';

/**
 * A tool-call format by our name or vLLM's, or `none` (pass-through), checked at start-up: a
 * misspelt one would otherwise fail every request it applies to, blamed on the client's request.
 */
export const toolParserFormatSchema = z.string().min(1).superRefine((name, ctx) => {
  if (name.trim().toLowerCase() === 'none') return;
  try {
    resolveParserFormat(name);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

/** A rule's model-name pattern (a case-insensitive regular expression): a bad one stops the start, rather than answering each request 500. */
const modelPattern = z.string().min(1).superRefine((pattern, ctx) => {
  try {
    new RegExp(pattern, 'i');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

/** One `toolParsers` rule: model-name pattern → tool-call format (the fields as DEFAULT_TOOL_PARSERS, gateway/config.ts, describes them). */
export const toolParserRuleSchema = z
  .strictObject({
    model: modelPattern,
    format: toolParserFormatSchema,
    reasoning: z.boolean().default(false),
    startsInReasoning: z.boolean().optional(),
    /** A `chat_template_kwargs` key that, true in a request, has the template open the block in the prompt: that request's output starts in reasoning. */
    thinkingKwarg: z.string().min(1).optional(),
  })
  .refine((rule) => rule.reasoning || !rule.startsInReasoning, { message: 'startsInReasoning is for a rule with reasoning: true (the <think> block its prompt opens)', path: ['startsInReasoning'] });
