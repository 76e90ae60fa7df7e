import { z } from 'zod';
import { checkSamplingRequest, positiveTokens, samplingRequestFields } from './sampling-request-fields.ts';

// Loose objects: like vLLM (pydantic extra="allow"), fields the simulator does not use
// (temperature, seed, ...) are accepted and ignored. Only what the simulator reads is typed.
const messageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(z.unknown()).nullish(),
});

/** vLLM's ChatCompletionRequest, as far as the simulator reads it. */
export const chatCompletionRequestSchema = z
  .looseObject({
    ...samplingRequestFields,
    messages: z.array(messageSchema).min(1),
    max_tokens: positiveTokens.nullish(),
    max_completion_tokens: positiveTokens.nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    /** Only looked at by a server with a tool parser (`--tool-call-parser`): whether it parses the reply. */
    tools: z.array(z.unknown()).nullish(),
    tool_choice: z.union([z.string(), z.looseObject({})]).nullish(),
  })
  .superRefine(checkSamplingRequest);

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
export type ChatRequestMessage = ChatCompletionRequest['messages'][number];
