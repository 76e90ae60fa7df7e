import { z } from 'zod';

const positiveTokens = z.number().int().min(1);

/**
 * vLLM's CompletionRequest (the legacy /v1/completions), as far as the simulator reads it; other
 * fields are accepted and ignored, as with pydantic's extra="allow". One prompt per request: a
 * string, a one-string list, or token ids.
 */
export const completionRequestSchema = z
  .looseObject({
    prompt: z.union([z.string(), z.array(z.string()).length(1), z.array(z.number().int().min(0)).min(1)]),
    model: z.string().nullish(),
    stream: z.boolean().nullish(),
    stream_options: z
      .looseObject({
        include_usage: z.boolean().nullish(),
        continuous_usage_stats: z.boolean().nullish(),
      })
      .nullish(),
    /** vLLM's default is the OpenAI legacy API's: 16. */
    max_tokens: positiveTokens.nullish(),
    n: z.number().int().min(1).nullish(),
    echo: z.boolean().nullish(),
    stop: z.union([z.string(), z.array(z.string())]).nullish(),
    include_stop_str_in_output: z.boolean().nullish(),
    /** Simulator extension: pick a scenario by name (same as model `sim-<name>`). */
    scenario: z.string().min(1).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.stream_options != null && !body.stream) {
      ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'Stream options can only be defined when `stream=True`.' });
    }
    if (body.n != null && body.n > 1) {
      ctx.addIssue({ code: 'custom', path: ['n'], message: 'n > 1 is not supported by the simulator.' });
    }
    if (body.echo === true) {
      ctx.addIssue({ code: 'custom', path: ['echo'], message: 'echo is not supported by the simulator.' });
    }
  });

export type CompletionRequest = z.infer<typeof completionRequestSchema>;

/** vLLM's default max_tokens for /v1/completions. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;
