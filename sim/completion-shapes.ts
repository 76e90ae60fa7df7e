import { randomUUID } from 'node:crypto';
import type { CompletionIdentity, SentFinishReason, Usage } from './chat-completion-shapes.ts';

// vLLM's serving_completion: streamed chunks dumped with exclude_unset=False (so `usage: null` and
// every choice field are present), the usage chunk with exclude_none, the full response as is.
// Since 0.10.2 (return_token_ids) a choice also has `token_ids` and `prompt_token_ids`, null unless
// asked for, in the field order of CompletionResponseStreamChoice and CompletionResponseChoice.

/** With `return_token_ids`: the ids a choice carries (streamed, the prompt's only on the first chunk); null otherwise. */
export interface ChoiceTokenIds {
  prompt: readonly number[] | null;
  generated: readonly number[] | null;
}

const NO_TOKEN_IDS: ChoiceTokenIds = { prompt: null, generated: null };

/** `requestId`: the client's (clientRequestId), as on chat: then the id is `cmpl-` and that. */
export function newTextCompletionIdentity(model: string, requestId?: string): CompletionIdentity {
  return { id: `cmpl-${requestId ?? randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

/**
 * One streamed `text_completion` chunk: a token's text; the last one carries finish_reason and
 * stop_reason. A running usage (continuous_usage_stats) is dumped whole: `prompt_tokens_details: null`.
 */
export function textChunk(ident: CompletionIdentity, text: string, finishReason: SentFinishReason | null, stopReason: string | number | null, usage: Usage | null, ids = NO_TOKEN_IDS) {
  return {
    id: ident.id,
    object: 'text_completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: stopReason, prompt_token_ids: ids.prompt, token_ids: ids.generated }],
    usage: usage && { ...usage, prompt_tokens_details: usage.prompt_tokens_details ?? null },
  };
}

/** `stream_options.include_usage`: a last chunk with no choices. */
export function textUsageChunk(ident: CompletionIdentity, usage: Usage) {
  return { id: ident.id, object: 'text_completion' as const, created: ident.created, model: ident.model, choices: [], usage };
}

/** The non-streaming `text_completion` object, every nullable field present as vLLM sends it. */
export function textCompletion(ident: CompletionIdentity, text: string, finishReason: SentFinishReason, stopReason: string | number | null, usage: Usage, ids = NO_TOKEN_IDS) {
  return {
    id: ident.id,
    object: 'text_completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: stopReason, token_ids: ids.generated, prompt_logprobs: null, prompt_token_ids: ids.prompt }],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...usage, prompt_tokens_details: usage.prompt_tokens_details ?? null },
    kv_transfer_params: null,
  };
}
