import { randomUUID } from 'node:crypto';
import type { FinishReason } from './sequence.ts';

// Object shapes and key order as vLLM's pydantic models serialize them (protocol.py: streamed
// chunks dumped with exclude_unset, the usage chunk with exclude_none, full responses as is).

export interface CompletionIdentity {
  /** `chatcmpl-` + 32 hex digits, like vLLM's random_uuid(). */
  id: string;
  /** Unix seconds, fixed for the whole request. */
  created: number;
  model: string;
}

export function newCompletionIdentity(model: string): CompletionIdentity {
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens };
}

interface StreamChoice {
  index: number;
  delta: { role?: 'assistant'; content?: string };
  logprobs: null;
  finish_reason: FinishReason | null;
  stop_reason?: string | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: StreamChoice[];
  usage?: Usage;
}

/** The first chunk: vLLM sends the role with an empty content before any token text. */
export function roleChunk(ident: CompletionIdentity): ChatCompletionChunk {
  return chunk(ident, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
}

/** One token's delta; the last one carries finish_reason and stop_reason (the matched `stop` string, else null). */
export function contentChunk(ident: CompletionIdentity, text: string, finishReason: FinishReason | null, stopReason?: string): ChatCompletionChunk {
  const choice: StreamChoice = { index: 0, delta: { content: text }, logprobs: null, finish_reason: finishReason };
  if (finishReason !== null) choice.stop_reason = stopReason ?? null;
  return chunk(ident, [choice]);
}

/** `stream_options.include_usage`: a last chunk with no choices. */
export function usageChunk(ident: CompletionIdentity, totals: Usage): ChatCompletionChunk {
  return { ...chunk(ident, []), usage: totals };
}

function chunk(ident: CompletionIdentity, choices: StreamChoice[]): ChatCompletionChunk {
  return { id: ident.id, object: 'chat.completion.chunk', created: ident.created, model: ident.model, choices };
}

/** The non-streaming `chat.completion` object, every nullable field present as vLLM sends it. */
export function chatCompletion(ident: CompletionIdentity, text: string, finishReason: FinishReason, totals: Usage, stopReason?: string) {
  return {
    id: ident.id,
    object: 'chat.completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          content: text,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [] as never[],
          reasoning_content: null,
        },
        logprobs: null,
        finish_reason: finishReason,
        stop_reason: stopReason ?? null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...totals, prompt_tokens_details: null },
    prompt_logprobs: null,
    kv_transfer_params: null,
  };
}
