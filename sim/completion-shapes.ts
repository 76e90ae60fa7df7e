import { randomUUID } from 'node:crypto';
import type { CompletionIdentity, SentFinishReason, Usage } from './chat-completion-shapes.ts';

// vLLM's serving_completion: streamed chunks dumped with exclude_unset=False (so `usage: null` and
// every choice field are present), the usage chunk with exclude_none, the full response as is.

/** `requestId`: the client's (clientRequestId), as on chat: then the id is `cmpl-` and that. */
export function newTextCompletionIdentity(model: string, requestId?: string): CompletionIdentity {
  return { id: `cmpl-${requestId ?? randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

/** One streamed `text_completion` chunk: a token's text; the last one carries finish_reason and stop_reason. */
export function textChunk(ident: CompletionIdentity, text: string, finishReason: SentFinishReason | null, stopReason: string | number | null, usage: Usage | null) {
  return {
    id: ident.id,
    object: 'text_completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: stopReason }],
    usage,
  };
}

/** `stream_options.include_usage`: a last chunk with no choices. */
export function textUsageChunk(ident: CompletionIdentity, usage: Usage) {
  return { id: ident.id, object: 'text_completion' as const, created: ident.created, model: ident.model, choices: [], usage };
}

/** The non-streaming `text_completion` object, every nullable field present as vLLM sends it. */
export function textCompletion(ident: CompletionIdentity, text: string, finishReason: SentFinishReason, stopReason: string | number | null, usage: Usage) {
  return {
    id: ident.id,
    object: 'text_completion' as const,
    created: ident.created,
    model: ident.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: stopReason, prompt_logprobs: null }],
    service_tier: null,
    system_fingerprint: null,
    usage: { ...usage, prompt_tokens_details: usage.prompt_tokens_details ?? null },
    kv_transfer_params: null,
  };
}
