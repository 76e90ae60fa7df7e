import { z } from 'zod';
import { addValueError } from './error-response.ts';
import { checkSamplingRequest, samplingRequestFields, tokenCount } from './sampling-request-fields.ts';

// Loose objects: like vLLM (pydantic extra="allow"), fields the simulator does not use
// (seed, presence_penalty, ...) are accepted and ignored. Only what the simulator reads is typed.
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
    max_tokens: tokenCount.nullish(),
    max_completion_tokens: tokenCount.nullish(),
    /** Only looked at by a server with a tool parser (`--tool-call-parser`): whether it parses the reply. */
    tools: z.array(z.unknown()).nullish(),
    tool_choice: z.union([z.string(), z.looseObject({})]).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().nullish(),
  })
  .superRefine((body, ctx) => {
    checkSamplingRequest(body, ctx);
    checkChatRequest(body, ctx);
  });

/**
 * ChatCompletionRequest's own model validators (protocol.py, v0.8–0.11), same words. pydantic stops
 * at the first one that raises, so at most one of these is reported.
 */
function checkChatRequest(
  body: { tools?: unknown[] | null; tool_choice?: unknown; logprobs?: boolean | null; top_logprobs?: number | null },
  ctx: z.RefinementCtx,
): void {
  // check_tool_usage: "none" needs no tools; an empty list counts as set (only absent or null is refused).
  if (body.tool_choice != null && body.tool_choice !== 'none' && body.tools == null) {
    return addValueError(ctx, 'When using `tool_choice`, `tools` must be set.');
  }
  // check_logprobs: 0 asks for no alternatives, so it needs no `logprobs`.
  if (body.top_logprobs != null && body.top_logprobs > 0 && !body.logprobs) {
    return addValueError(ctx, 'when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
  }
}

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
export type ChatRequestMessage = ChatCompletionRequest['messages'][number];
