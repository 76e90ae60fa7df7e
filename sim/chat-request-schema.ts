import { z } from 'zod';

// Loose objects: like vLLM (pydantic extra="allow"), fields the simulator does not use
// (temperature, seed, ...) are accepted and ignored. Only what the simulator reads is typed.
const messageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(z.unknown()).nullish(),
});

const positiveTokens = z.number().int().min(1);

export const chatCompletionRequestSchema = z
  .looseObject({
    messages: z.array(messageSchema).min(1),
    model: z.string().nullish(),
    stream: z.boolean().nullish(),
    stream_options: z
      .looseObject({
        include_usage: z.boolean().nullish(),
        continuous_usage_stats: z.boolean().nullish(),
      })
      .nullish(),
    max_tokens: positiveTokens.nullish(),
    max_completion_tokens: positiveTokens.nullish(),
    n: z.number().int().min(1).nullish(),
    temperature: z.number().nullish(),
    stop: z.union([z.string(), z.array(z.string())]).nullish(),
    /** vLLM extension: keep the matched stop string at the end of the text. */
    include_stop_str_in_output: z.boolean().nullish(),
    top_p: z.number().nullish(),
    /** Only looked at by a server with a tool parser (`--tool-call-parser`): whether it parses the reply. */
    tools: z.array(z.unknown()).nullish(),
    tool_choice: z.union([z.string(), z.looseObject({})]).nullish(),
    /** Simulator extension: pick a scenario by name (same as model `sim-<name>`). */
    scenario: z.string().min(1).optional(),
  })
  .superRefine((body, ctx) => {
    // vLLM's ChatCompletionRequest validators, same wording.
    if (body.stream_options != null && !body.stream) {
      ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'Stream options can only be defined when `stream=True`.' });
    }
    if (body.n != null && body.n > 1) {
      ctx.addIssue({ code: 'custom', path: ['n'], message: 'n > 1 is not supported by the simulator.' });
    }
  });

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
export type ChatRequestMessage = ChatCompletionRequest['messages'][number];
