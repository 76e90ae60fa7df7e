import { z } from 'zod';
import { FUNCTION_NAME, FUNCTION_NAME_RULE } from '../core/function-name.ts';
import { MAX_TOOL_ROUNDS } from './config.ts';

const contentPart = z.looseObject({ type: z.string() });

const CONTENT_SHAPE = 'a string or an array of content parts';

/**
 * A message's content: zod's own word for a union that failed is "Invalid input", which says
 * nothing of what was expected; this says what a content is (and that it is required).
 */
const content = (role: string) =>
  z.union([z.string(), z.array(contentPart)], {
    error: (issue) => {
      if (issue.input === undefined) return `required for a ${role} message: ${CONTENT_SHAPE}`;
      if (Array.isArray(issue.input)) return `must be ${CONTENT_SHAPE}; each part an object with a string "type" (e.g. {"type": "text", "text": "…"})`;
      return `must be ${CONTENT_SHAPE}, not ${issue.input === null ? 'null' : typeof issue.input}`;
    },
  });

/**
 * An optional field that may also be sent as null, read as left out: OpenAI and vLLM take an
 * explicit null for any optional field, and clients that serialise every field (LiteLLM, pydantic
 * models) send it, on history messages too.
 */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined).optional();

const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export const chatMessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: content('system'), name: optional(z.string()) }),
  z.looseObject({ role: z.literal('developer'), content: content('developer'), name: optional(z.string()) }),
  z.looseObject({ role: z.literal('user'), content: content('user'), name: optional(z.string()) }),
  z.looseObject({
    role: z.literal('assistant'),
    content: content('assistant').nullable().optional(),
    name: optional(z.string()),
    tool_calls: optional(z.array(toolCallSchema)),
  }),
  z.looseObject({ role: z.literal('tool'), content: content('tool'), tool_call_id: z.string() }),
  // OpenAI's deprecated function calling, still in its SDKs' message types and taken by vLLM:
  // older agents (LangChain's openai-functions) send the result of a `function_call` this way.
  z.looseObject({ role: z.literal('function'), content: content('function').nullable(), name: z.string() }),
]);

export type ChatMessage = z.infer<typeof chatMessageSchema>;

const TOOL_CHOICE_SHAPE = '"none", "auto", "required" or {"type": "function", "function": {"name": "…"}}';

/**
 * OpenAI's `tool_choice`: a mode, or one function the model must call. Its newer shapes
 * (`allowed_tools`, `custom`) are refused by name: vLLM has neither.
 */
const toolChoiceSchema = z.union(
  [
    z.enum(['none', 'auto', 'required']),
    z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
  ],
  {
    error: (issue) => {
      const type = (issue.input as { type?: unknown } | null)?.type;
      if (type === 'allowed_tools' || type === 'custom') return `the "${type}" tool choice is not supported; use ${TOOL_CHOICE_SHAPE}`;
      return `must be ${TOOL_CHOICE_SHAPE}`;
    },
  },
);

export type ToolChoice = z.infer<typeof toolChoiceSchema>;

/** A number in OpenAI's documented range for the field, said so when it is not one. */
const numberIn = (min: number, max: number) => {
  const expected = `must be a number from ${min} to ${max}`;
  return z.number({ error: expected }).min(min, expected).max(max, expected);
};

/**
 * OpenAI's sampling fields, typed here so that a wrong one is refused in the gateway's words with
 * OpenAI's `param`, not passed upstream to come back as a pydantic dump at `body.<field>`. Each
 * check refuses only what OpenAI refuses (temperature above 2 included, which vLLM would take), so
 * a value both take always passes; where vLLM is stricter (top_p 0) its own check answers. `stop`
 * takes any number of strings, as vLLM does: OpenAI's limit of 4 would break vLLM clients that send more.
 */
const samplingFields = {
  temperature: optional(numberIn(0, 2)),
  top_p: optional(numberIn(0, 1)),
  presence_penalty: optional(numberIn(-2, 2)),
  frequency_penalty: optional(numberIn(-2, 2)),
  // Any integer, 64-bit seeds included (vLLM takes the int64 range): zod's .int() stops at 2^53.
  seed: optional(z.number({ error: 'must be an integer' }).refine(Number.isInteger, 'must be an integer')),
  stop: optional(z.union([z.string(), z.array(z.string())], { error: 'must be a string or an array of strings' })),
  // Token id → bias; vLLM clamps the bias to OpenAI's -100..100 and checks the ids against its vocabulary.
  logit_bias: optional(z.record(z.string(), z.number({ error: 'must be a number' }), { error: 'must be an object mapping token ids to numbers' })),
  user: optional(z.string({ error: 'must be a string' })),
};

/**
 * OpenAI's `metadata`: at most 16 pairs, keys up to 64 characters, string values up to 512.
 * Checked as OpenAI checks it, at `param: "metadata"`: a gateway that took `"x"` there answered a
 * request OpenAI refuses, and a client tried against it broke on the service it was written for.
 */
const METADATA_SHAPE = 'an object of at most 16 string values, keys up to 64 characters and values up to 512';
const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`);
const metadataSchema = z
  .record(z.string(), z.unknown(), { error: (issue) => `must be ${METADATA_SHAPE}, not ${kindOf(issue.input)}` })
  .superRefine((metadata, ctx) => {
    const wrong = (why: string) => ctx.addIssue({ code: 'custom', message: `must be ${METADATA_SHAPE}; ${why}` });
    const entries = Object.entries(metadata);
    if (entries.length > 16) return wrong(`it has ${entries.length} keys`);
    for (const [key, value] of entries) {
      const name = JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key);
      if ([...key].length > 64) return wrong(`the key ${name} has ${[...key].length} characters`);
      if (typeof value !== 'string') return wrong(`the value of ${name} is ${kindOf(value)}`);
      if ([...value].length > 512) return wrong(`the value of ${name} has ${[...value].length} characters`);
    }
  });

/** `max_tool_rounds`: its range, said so. */
const toolRounds = `must be an integer from 1 to ${MAX_TOOL_ROUNDS}`;

/** `max_tokens`, `max_completion_tokens`: a count of tokens, said so. */
const tokenLimit = z.number({ error: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer');

/**
 * The OpenAI chat-completions body. Unknown fields pass through to the upstream untouched (a
 * gateway must not drop sampling options it does not know); our own extensions are prefixed
 * or documented in the README.
 */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(chatMessageSchema).min(1, 'expected at least one message, got an empty array'),
  stream: z.boolean().nullish().transform((stream) => stream ?? false),
  stream_options: z.looseObject({ include_usage: optional(z.boolean()), continuous_usage_stats: optional(z.boolean()) }).nullable().optional(),
  max_tokens: tokenLimit.nullable().optional(),
  max_completion_tokens: tokenLimit.nullable().optional(),
  n: z.number({ error: 'must be an integer' }).pipe(z.literal(1, 'only n=1 is supported')).nullable().optional(),
  ...samplingFields,
  metadata: optional(metadataSchema),
  // Refused rather than forwarded and dropped: the upstream would compute them for nothing.
  logprobs: z
    .boolean({ error: 'must be a boolean' })
    .pipe(z.literal(false, 'logprobs are not supported: the gateway re-frames the text around tool calls and does not pass per-token log probabilities on'))
    .nullable()
    .optional(),
  // Asks for logprobs too (OpenAI and vLLM refuse it without `logprobs: true`): refused in the same
  // words rather than sent upstream to come back as its validation dump. 0, which asks for none, passes.
  top_logprobs: z
    .number({ error: 'must be an integer' })
    .pipe(z.literal(0, 'top_logprobs is not supported: it needs logprobs, which the gateway does not pass on (it re-frames the text around tool calls)'))
    .nullable()
    .optional(),
  // vLLM's extension: the prompt's log probabilities. The gateway's upstream request is always a
  // stream, for which vLLM refuses it ("not available when stream=True", to a client that sent
  // none), and the re-framed answer has nowhere to carry them. 0 asks for none, and passes.
  prompt_logprobs: z
    .number({ error: 'must be an integer' })
    .pipe(z.literal(0, 'prompt_logprobs is not supported: the gateway streams every round from the upstream, which gives no prompt log probabilities on a stream'))
    .nullable()
    .optional(),
  // vLLM's extension (0.10.2+): the prompt's and the answer's token ids. The gateway's answer is
  // several rounds' text re-framed around tool calls, which no one list of ids describes; refused
  // rather than answered without them (a client reading `token_ids` found nothing there).
  return_token_ids: z
    .boolean({ error: 'must be a boolean' })
    .pipe(z.literal(false, 'return_token_ids is not supported: the gateway re-frames the text of several rounds around tool calls, which no one list of token ids describes'))
    .nullable()
    .optional(),
  /** Extension: run tools while the model decodes (default: the server's setting). */
  partial_execution: optional(z.boolean()),
  /** Extension: upper bound on model→tool→model rounds for this request. */
  max_tool_rounds: optional(z.number({ error: toolRounds }).int(toolRounds).min(1, toolRounds).max(MAX_TOOL_ROUNDS, toolRounds)),
  /** Extension: what a mid-decode tool rejection does (default: the server's `onToolReject`). */
  on_tool_reject: optional(z.enum(['reprompt', 'error'])),
  /** Extension: check the arguments of client-executed calls against their JSON Schema while they stream. */
  validate_tool_arguments: optional(z.boolean()),
  /** Extension: set false to omit the `conveyor` tool events from the SSE stream. */
  conveyor_events: optional(z.boolean()),
  /**
   * Extension: the model's tool-call format (ours or vLLM's --tool-call-parser name), overriding the
   * model-name rules; `none` = pass-through (all text forwarded as content, no calls recognised).
   */
  tool_parser: optional(z.string().min(1)),
  skip_special_tokens: optional(z.boolean()),
  tools: optional(
    z.array(
      z.looseObject({
        type: z.string(),
        // As OpenAI checks them (vLLM passes a string `parameters` to the chat template); null, as
        // clients that serialise every field send it, is left out.
        function: z.looseObject({ name: z.string().min(1), description: optional(z.string()), parameters: optional(z.record(z.string(), z.unknown())) }).optional(),
      }),
    ),
  ),
  /** `none`: no call is recognised or run; `required` or a named function: the first round only (see README). */
  tool_choice: toolChoiceSchema.nullable().optional(),
  /** `false`: at most one call per round; the decode is cut where a second call begins. */
  parallel_tool_calls: z.boolean().nullable().optional(),
}).superRefine((request, ctx) => {
  if (request.stream_options != null && !request.stream) {
    // As OpenAI and vLLM answer: the options only say what a stream carries.
    ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'stream_options is only allowed when stream is true' });
  }
  // A function tool needs its function, as OpenAI and vLLM check; another type (OpenAI's `custom`)
  // passes to the upstream, which knows whether it has such tools.
  // One name, one tool: a call names its tool, and two of the same name would leave it to chance
  // which one a call runs (a gateway tool or the client's) or is checked against.
  const seen = new Set<string>();
  request.tools?.forEach((tool, index) => {
    if (tool.type === 'function' && tool.function === undefined) ctx.addIssue({ code: 'custom', path: ['tools', index, 'function'], message: 'required for a tool of type "function"' });
    const name = tool.function?.name;
    if (name === undefined) return;
    // As OpenAI answers; vLLM takes any string, but a name the model cannot spell in the call
    // syntax of every format would be recognised by some parsers and not others.
    if (!FUNCTION_NAME.test(name)) ctx.addIssue({ code: 'custom', path: ['tools', index, 'function', 'name'], message: `tool name ${JSON.stringify(name)} must be ${FUNCTION_NAME_RULE}` });
    if (seen.has(name)) ctx.addIssue({ code: 'custom', path: ['tools', index, 'function', 'name'], message: `tool names must be unique: "${name}" is listed more than once` });
    seen.add(name);
  });
  // As OpenAI and vLLM answer: a choice that forces a call must name something the request offers.
  const choice = request.tool_choice;
  if (choice == null || choice === 'none' || choice === 'auto') return;
  const names = (request.tools ?? []).map((tool) => tool.function?.name);
  // A gateway tool is offered to every request, but one that forces it lists it, by name alone.
  const listIt = (name: string) => ` (to force one of the gateway's tools, list it by name alone: "tools": [{"type": "function", "function": {"name": ${JSON.stringify(name)}}}])`;
  if (names.length === 0) {
    const hint = typeof choice === 'object' ? listIt(choice.function.name) : '';
    ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `tool_choice ${JSON.stringify(choice)} needs tools, and the request lists none${hint}` });
  } else if (typeof choice === 'object' && !names.includes(choice.function.name)) {
    ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `tool_choice names "${choice.function.name}", which is not in tools (${names.join(', ')})${listIt(choice.function.name)}` });
  }
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** Fields that are ours and must not be forwarded upstream. */
export const EXTENSION_FIELDS = ['partial_execution', 'max_tool_rounds', 'conveyor_events', 'tool_parser', 'on_tool_reject', 'validate_tool_arguments'] as const;
