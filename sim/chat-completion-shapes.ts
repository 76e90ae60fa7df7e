import { randomUUID } from 'node:crypto';
import type { MessageToolCall, ReplyDelta } from './mistral-tool-calls.ts';
import type { FinishReason } from './sequence.ts';

/** A finish reason as sent: the engine's, or `tool_calls` when the server's tool parser found calls. */
export type SentFinishReason = FinishReason | 'tool_calls';

// Object shapes and key order as vLLM's pydantic models serialize them (protocol.py: streamed
// chunks dumped with exclude_unset, the usage chunk with exclude_none, full responses as is).

export interface CompletionIdentity {
  /** `chatcmpl-` + 32 hex digits, like vLLM's random_uuid(). */
  id: string;
  /** Unix seconds, fixed for the whole request. */
  created: number;
  model: string;
}

/**
 * `requestId`: the client's, as vLLM takes it (serving_engine's `_base_request_id`): its
 * `X-Request-Id` header, else the body's `request_id`; then the id is `chatcmpl-` and that.
 */
export function newCompletionIdentity(model: string, requestId?: string): CompletionIdentity {
  return { id: `chatcmpl-${requestId ?? randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

/** The request id a client gave, the way vLLM reads it: the `X-Request-Id` header first, then the body's `request_id`. */
export function clientRequestId(req: { headers: Record<string, string | string[] | undefined> }, body: Record<string, unknown>): string | undefined {
  const header = req.headers['x-request-id'];
  const given = Array.isArray(header) ? header[0] : header;
  if (given) return given;
  const id = body['request_id'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number } | null;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens };
}

/**
 * A request's final usage: with `--enable-prompt-tokens-details`, and a prefix the cache held,
 * `prompt_tokens_details.cached_tokens` as vLLM gives it (left out, or null in a whole response, otherwise).
 */
export function finalUsage(promptTokens: number, completionTokens: number, cachedTokens: number | undefined, details: boolean | undefined): Usage {
  const totals = usage(promptTokens, completionTokens);
  return details && cachedTokens ? { ...totals, prompt_tokens_details: { cached_tokens: cachedTokens } } : totals;
}

interface StreamChoice {
  index: number;
  delta: { role?: string } & ReplyDelta;
  logprobs: null;
  finish_reason: SentFinishReason | null;
  stop_reason?: string | number | null;
  /** vLLM 0.10.2 on: the token ids of the delta with `return_token_ids`, else null (on every chunk but the role's). */
  token_ids?: readonly number[] | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: StreamChoice[];
  usage?: Usage;
  /** vLLM 0.10.2 on: on the role chunk, the prompt's token ids with `return_token_ids`, else null. */
  prompt_token_ids?: readonly number[] | null;
}

/** The first chunk: vLLM sends the role (chat-response-role.ts) with an empty content before any token text. */
export function roleChunk(ident: CompletionIdentity, promptTokenIds: readonly number[] | null = null, role = 'assistant'): ChatCompletionChunk {
  return { ...chunk(ident, [{ index: 0, delta: { role, content: '' }, logprobs: null, finish_reason: null }]), prompt_token_ids: promptTokenIds };
}

/**
 * `echo`: the chunk after the role's that carries the last message's content, as vLLM sends it —
 * no token_ids (it sets none), only when there is something to echo.
 */
export function echoChunk(ident: CompletionIdentity, text: string): ChatCompletionChunk {
  return chunk(ident, [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]);
}

/**
 * One token's delta (`{content}`, or with a tool parser `{tool_calls}`, both, or `{}` on a last
 * token that adds nothing); the last one carries finish_reason and stop_reason (the matched
 * `stop` string or stop token id, else null). Every one ends with `"token_ids":null` (the delta's
 * ids with `return_token_ids`), as vLLM's since 0.10.2 do (a gateway that expects the older end
 * must still read them fast).
 */
export function deltaChunk(ident: CompletionIdentity, delta: ReplyDelta, finishReason: SentFinishReason | null, stopReason?: string | number, tokenIds: readonly number[] | null = null): ChatCompletionChunk {
  const choice: StreamChoice = { index: 0, delta, logprobs: null, finish_reason: finishReason };
  if (finishReason !== null) choice.stop_reason = stopReason ?? null;
  choice.token_ids = tokenIds;
  return chunk(ident, [choice]);
}

/** `stream_options.include_usage`: a last chunk with no choices. */
export function usageChunk(ident: CompletionIdentity, totals: Usage): ChatCompletionChunk {
  return { ...chunk(ident, []), usage: totals };
}

function chunk(ident: CompletionIdentity, choices: StreamChoice[]): ChatCompletionChunk {
  return { id: ident.id, object: 'chat.completion.chunk', created: ident.created, model: ident.model, choices };
}

/**
 * The non-streaming `chat.completion` object, every nullable field present as vLLM sends it.
 * `message.tool_calls` holds what a server-side tool parser found (then `content` is the text
 * before the calls, or null).
 */
export function chatCompletion(
  ident: CompletionIdentity,
  message: { content: string | null; toolCalls?: MessageToolCall[]; reasoning?: string | null; role?: string },
  finishReason: SentFinishReason,
  totals: Usage,
  stopReason?: string | number,
  ids?: { prompt: readonly number[]; generated: readonly number[] },
) {
  return {
    id: ident.id,
    object: 'chat.completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [
      {
        index: 0,
        message: {
          role: message.role ?? 'assistant',
          content: message.content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: message.toolCalls ?? [],
          reasoning_content: message.reasoning ?? null,
        },
        logprobs: null,
        finish_reason: finishReason,
        stop_reason: stopReason ?? null,
        token_ids: ids?.generated ?? null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...totals, prompt_tokens_details: totals.prompt_tokens_details ?? null },
    prompt_logprobs: null,
    prompt_token_ids: ids?.prompt ?? null,
    kv_transfer_params: null,
  };
}
