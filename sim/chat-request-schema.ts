import { z } from 'zod';
import { addValueError, pydanticMissingField } from './error-response.ts';
import { laxBool, laxInt } from './pydantic-lax.ts';
import { checkSamplingRequest, samplingRequestFields, streamOptionsProblem, tokenCount } from './sampling-request-fields.ts';
import { isJsonObject } from '../core/json-object.ts';

// Loose objects: like vLLM (pydantic extra="allow"), fields the simulator does not use
// (user, logit_bias, ...) are accepted and ignored. Only what the simulator reads is typed.

const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
const ROLE_LITERAL_WORDS = `Input should be ${CHAT_ROLES.slice(0, -1).map((r) => `'${r}'`).join(', ')} or '${CHAT_ROLES.at(-1)}'`;

/** One chat message, as /v1/chat/completions and /tokenize read it. */
export const chatMessageSchema = z.looseObject({
  // pydantic's words for a Literal field, not zod's ("Invalid option: expected one of …"). vLLM itself
  // takes any role string here (its CustomChatCompletionMessageParam) and refuses it later, in the
  // chat template; the simulator's template knows these six (sim/README.md, Errors).
  role: z.enum(CHAT_ROLES, { error: (issue) => (issue.input === undefined ? 'Field required' : ROLE_LITERAL_WORDS) }),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(z.unknown()).nullish(),
});

/** vLLM's ChatCompletionRequest, as far as the simulator reads it. */
export const chatCompletionRequestSchema = z
  .looseObject({
    ...samplingRequestFields,
    /** An empty list passes, as pydantic lets it; the prompt's template refuses it (chat-prompt.ts). */
    messages: z.array(chatMessageSchema),
    max_tokens: tokenCount.nullish(),
    max_completion_tokens: tokenCount.nullish(),
    /**
     * Checked after the model validators (toolShapeSchema), as pydantic checks fields after `mode="before"`
     * validators; only looked at by a server with a tool parser (`--tool-call-parser`): whether it parses the reply.
     */
    tools: z.array(z.unknown()).nullish(),
    tool_choice: z.union([z.string(), z.looseObject({})]).nullish(),
    logprobs: laxBool().nullish(),
    top_logprobs: laxInt().nullish(),
    echo: laxBool().nullish(),
  })
  .superRefine((body, ctx) => {
    checkSamplingRequest(body, ctx);
    checkChatRequest(body, ctx);
  });

/**
 * ChatCompletionRequest's own model validators (protocol.py, v0.8–0.11), same words. pydantic stops
 * at the first one that raises, so at most one of these is reported; `mode="before"` validators run
 * last-defined first: check_tool_usage, check_logprobs, then validate_stream_options.
 */
function checkChatRequest(body: ChatValidatorFields, ctx: z.RefinementCtx): void {
  const toolProblem = toolUsageProblem(body.tools, body.tool_choice);
  if (toolProblem !== undefined) return addValueError(ctx, toolProblem);
  // check_logprobs as of v0.11 (vllm-project/vllm#24956): -1 asks for the whole vocabulary, so like a
  // positive count it needs `logprobs` (then refused here: checkSamplingRequest); below -1 is refused;
  // 0 asks for no alternatives, so it needs no `logprobs`. v0.10.2 and before refused -1 as well.
  if (body.top_logprobs != null && body.top_logprobs < -1) return addValueError(ctx, '`top_logprobs` must be a positive value or -1.', 'top_logprobs');
  if (body.top_logprobs != null && body.top_logprobs !== 0 && !body.logprobs) {
    return addValueError(ctx, 'when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
  }
  const streamProblem = streamOptionsProblem(body);
  if (streamProblem !== undefined) return addValueError(ctx, streamProblem, 'stream_options');
  // check_generation_prompt reads the body as sent: both must be given (add_generation_prompt's default is not enough).
  if (body.continue_final_message && body.add_generation_prompt) {
    return addValueError(ctx, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
  }
  // Then the fields: each tool as vLLM's ChatCompletionToolsParam reads it.
  const tools = z.array(toolShapeSchema).nullish().safeParse(body.tools, { error: pydanticMissingField });
  if (!tools.success) for (const issue of tools.error.issues) ctx.addIssue({ ...issue, path: ['tools', ...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
}

/** A function tool with a name (`type` defaults to "function"), as ChatCompletionToolsParam takes it. */
const toolShapeSchema = z.looseObject({
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string(), description: z.string().nullish(), parameters: z.record(z.string(), z.unknown()).nullish() }),
});

interface ChatValidatorFields {
  tools?: unknown[] | null;
  tool_choice?: unknown;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  stream?: boolean | null;
  stream_options?: Parameters<typeof streamOptionsProblem>[0]['stream_options'];
  continue_final_message?: unknown;
  add_generation_prompt?: unknown;
}

const NAMED_USAGE = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';

/**
 * check_tool_usage, in its order. "none" needs no tools; an empty list counts as set (only absent
 * or null is refused), and "required" with an empty list is taken as "none".
 */
function toolUsageProblem(tools: unknown[] | null | undefined, choice: unknown): string | undefined {
  if (choice == null || choice === 'none') return undefined;
  if (tools == null) return 'When using `tool_choice`, `tools` must be set.';
  if (typeof choice === 'string') {
    return choice === 'auto' || choice === 'required' ? undefined : `Invalid value for \`tool_choice\`: ${choice}! Only named tools, "none", "auto" or "required" are supported.`;
  }
  const fn = (choice as { function?: unknown }).function;
  if (!isJsonObject(fn)) return `Invalid value for \`function\`: \`${pyStr(fn)}\` in \`tool_choice\`! ${NAMED_USAGE}`;
  if (!('name' in fn)) return `Expected field \`name\` in \`function\` in \`tool_choice\`! ${NAMED_USAGE}`;
  if (typeof fn.name !== 'string' || fn.name.length === 0) return `Invalid \`name\` in \`function\`: \`${pyStr(fn.name)}\` in \`tool_choice\`! ${NAMED_USAGE}`;
  // A malformed tool matches nothing (newer vLLM; older ones failed with a KeyError, a 500).
  const named = tools.some((tool) => isJsonObject(tool) && isJsonObject(tool.function) && tool.function.name === fn.name);
  return named ? undefined : 'The tool specified in `tool_choice` does not match any of the specified `tools`';
}

/** A JSON value as Python's f-string shows it, near enough for these messages. */
function pyStr(value: unknown): string {
  if (value === undefined || value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Whether a request names the function to call (`{"type": "function", "function": {"name": …}}`), not "auto" or "required". */
export function isNamedToolChoice(choice: unknown): boolean {
  return isJsonObject(choice);
}

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;
export type ChatRequestMessage = ChatCompletionRequest['messages'][number];
