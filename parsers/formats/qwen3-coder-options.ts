import { z } from 'zod';
import { ToolDefinitionSchema } from './schema-typed-value.ts';

/** The options of createQwen3CoderParser (zod-validated, unknown keys rejected). */
export const Qwen3CoderParserOptionsSchema = z
  .object({
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
    /** The request's `tools` (OpenAI shape): parameter values are converted to their schema types (else text). */
    toolDefinitions: z.array(ToolDefinitionSchema).optional(),
    /**
     * Tool name → parameter whose value is code ("*" matches any tool): each completed line of
     * it is also a `line` piece while it streams.
     */
    lineFields: z.record(z.string().min(1), z.string().min(1)).default({ python: 'code' }),
  })
  .strict();

export type Qwen3CoderParserOptions = z.input<typeof Qwen3CoderParserOptionsSchema>;
