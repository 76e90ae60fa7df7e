import { EXTENSION_FIELDS, type ChatMessage, type ChatRequest, type ToolChoice } from './chat-request-schema.ts';

export interface UpstreamBodyInput {
  /** The client's request, validated. */
  request: ChatRequest;
  /** Merged over the request (e.g. `skip_special_tokens: false` for special-token formats). */
  overrides?: Record<string, unknown>;
  /** When set, replaces the model the client named. */
  model?: string;
  round: number;
  /** The conversation so far: the client's messages, then this request's assistant turns and observations. */
  messages: ChatMessage[];
  /** What is left of the client's max_tokens (or max_completion_tokens) after the rounds before, or less when the context leaves less (session-round.ts). */
  maxTokens?: number;
  /** Ask for usage on every chunk (vLLM's `stream_options.continuous_usage_stats`). */
  continuousUsage?: boolean;
}

/** The body one round sends upstream: the client's request, less our extensions, over this round's conversation. */
export function upstreamBody({ request, overrides, model, round, messages, maxTokens, continuousUsage }: UpstreamBodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request, ...overrides, messages };
  // A round cut short is a stream closed by us, and no server sends usage for that: only the usage
  // already on its chunks counts it. (vLLM also needs include_usage: llm-client always sets it.)
  if (continuousUsage) body.stream_options = { ...request.stream_options, continuous_usage_stats: true };
  for (const field of EXTENSION_FIELDS) delete body[field];
  if (model) body.model = model;
  if (maxTokens !== undefined) {
    if (request.max_tokens != null) body.max_tokens = maxTokens;
    if (request.max_completion_tokens != null) body.max_completion_tokens = maxTokens;
  }
  // A choice that forces a call holds for the first round: every later round follows a call's
  // observation, and forcing another there would loop until max_tool_rounds (OpenAI's Agents SDK
  // resets it the same way, `reset_tool_choice`).
  if (round > 1 && forcesCall(request.tool_choice)) body.tool_choice = 'auto';
  // vLLM's prefill (`continue_final_message`) goes on with the client's last message, the
  // assistant's start, and `add_generation_prompt: false` alone leaves the client's conversation
  // without the assistant's header. Both are the client's round's: a later round's prompt ends
  // with the tools' results, which a Hugging Face template would cut the prompt after (the model
  // writing on inside the tool's turn, answered in the tool's role) and mistral_common refuses as a
  // final message to continue (400): that round opens a reply of its own. Any value the client sent
  // is replaced, pydantic's lax "false" or 0 included.
  if (round > 1) {
    const { continue_final_message: prefill, add_generation_prompt: generationPrompt } = request as { continue_final_message?: unknown; add_generation_prompt?: unknown };
    if (prefill != null) body.continue_final_message = false;
    if (prefill || generationPrompt != null) body.add_generation_prompt = true;
  }
  // "auto" with no tools listed means what leaving it out means, and some clients send it so; vLLM
  // refuses it ("When using `tool_choice`, `tools` must be set."), so it is not passed on.
  if (body.tool_choice === 'auto' && request.tools == null) delete body.tool_choice;
  return body;
}

function forcesCall(choice: ToolChoice | null | undefined): boolean {
  return choice === 'required' || (typeof choice === 'object' && choice !== null);
}
