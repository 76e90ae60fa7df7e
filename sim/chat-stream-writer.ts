import type { ServerResponse } from 'node:http';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import {
  deltaChunk,
  echoChunk,
  finalUsage,
  roleChunk,
  usage,
  usageChunk,
  type ChatCompletionChunk,
  type CompletionIdentity,
} from './chat-completion-shapes.ts';
import { eventTokenIds } from './merged-deltas.ts';
import type { ToolCallsStream } from './mistral-tool-calls.ts';
import type { ReasoningStream } from './reasoning-split.ts';
import type { TokenEvent } from './sequence.ts';

export interface ChatStreamOptions {
  promptTokens: number;
  /** stream_options.include_usage: a final chunk with `choices: []` and the usage. */
  includeUsage: boolean;
  /** stream_options.continuous_usage_stats: usage on every chunk too. */
  continuousUsage: boolean;
  /** The server's reasoning parser at work on this reply (`--reasoning-parser`): its thinking goes out as `reasoning_content`. */
  reasoning?: ReasoningStream;
  /** The server's tool parser at work on this reply's content (`--tool-call-parser`): tokens become `tool_calls` deltas. */
  toolCalls?: ToolCallsStream;
  /** Whether calls sent end the stream with finish_reason `tool_calls` (false for a named tool_choice). Default true. */
  finishWithToolCalls?: boolean;
  /** vLLM's `--enable-prompt-tokens-details`: the final usage says how many prompt tokens the prefix cache held (`prompt_tokens_details.cached_tokens`). */
  promptTokensDetails?: boolean;
  /**
   * `return_token_ids`: the prompt's ids, sent on the role chunk; every delta chunk then carries its
   * tokens' ids. A token the tool parser sends no chunk for takes its id with it, as in vLLM 0.11
   * (vllm-project/vllm#27482).
   */
  returnTokenIds?: readonly number[];
  /** `echo`: the last message's content, sent after the role chunk (chat-echo.ts); nothing when empty. */
  echo?: string;
  /** The role the first chunk announces (chat-response-role.ts); default "assistant". */
  role?: string;
}

/**
 * Writes one streamed chat completion as vLLM's serving_chat does: headers at once, then at the
 * first token the role chunk and that token's chunk, one chunk per token after it (held-back
 * bytes give `"content": ""`), finish_reason on the last token's chunk, the optional usage chunk,
 * and `data: [DONE]`. A small push-based state machine fed by the engine loop.
 */
export class ChatStreamWriter {
  private readonly res: ServerResponse;
  private readonly body: ChunkedBodyWriter;
  private readonly ident: CompletionIdentity;
  private readonly options: ChatStreamOptions;
  private started = false;
  private ended = false;

  constructor(res: ServerResponse, ident: CompletionIdentity, options: ChatStreamOptions) {
    this.res = res;
    this.body = new ChunkedBodyWriter(res);
    this.ident = ident;
    this.options = options;
  }

  /** Whether [DONE] has been written (a close after this is not a disconnect). */
  get finished(): boolean {
    return this.ended;
  }

  open(): void {
    // Starlette's StreamingResponse(media_type="text/event-stream") through uvicorn: no
    // content-length, so the body is chunked; headers go out before the first token.
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    this.res.flushHeaders();
  }

  token(event: TokenEvent): void {
    if (this.ended) return;
    if (!this.started) {
      this.started = true;
      this.send(this.withUsage(roleChunk(this.ident, this.options.returnTokenIds ?? null, this.options.role), 0));
      if (this.options.echo) this.send(this.withUsage(echoChunk(this.ident, this.options.echo), 0));
    }
    const { toolCalls, reasoning } = this.options;
    const parts = reasoning ? reasoning.push(event.text) : { content: event.text };
    const contentDelta = parts.content === undefined ? undefined : toolCalls ? toolCalls.push(parts.content) : { content: parts.content };
    const delta = parts.reasoning === undefined ? contentDelta : { reasoning_content: parts.reasoning, ...contentDelta };
    // A token the tool parser turns into nothing (a bracket, a key) gets no chunk, as in vLLM;
    // the last token always does, with the finish reason.
    if (delta === undefined && event.finishReason === null) return;
    const finishReason = event.finishReason !== null && toolCalls?.called && this.options.finishWithToolCalls !== false ? 'tool_calls' : event.finishReason;
    const tokenIds = this.options.returnTokenIds === undefined ? null : eventTokenIds(event);
    this.send(this.withUsage(deltaChunk(this.ident, delta ?? {}, finishReason, event.stopReason, tokenIds), event.completionTokens));
    if (event.finishReason === null) return;
    if (this.options.includeUsage) this.send(usageChunk(this.ident, finalUsage(this.options.promptTokens, event.completionTokens, event.cachedTokens, this.options.promptTokensDetails)));
    this.res.end('data: [DONE]\n\n');
    this.ended = true;
  }

  private withUsage(chunk: ChatCompletionChunk, completionTokens: number): ChatCompletionChunk {
    if (!this.options.continuousUsage) return chunk;
    return { ...chunk, usage: usage(this.options.promptTokens, completionTokens) };
  }

  private send(chunk: ChatCompletionChunk): void {
    this.body.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
}
