import type { ServerResponse } from 'node:http';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import { finalUsage, usage, type CompletionIdentity } from './chat-completion-shapes.ts';
import { textChunk, textUsageChunk, type ChoiceTokenIds } from './completion-shapes.ts';
import { eventTokenIds } from './merged-deltas.ts';
import type { TokenEvent } from './sequence.ts';

export interface CompletionStreamOptions {
  promptTokens: number;
  /** stream_options.include_usage: a final chunk with `choices: []` and the usage. */
  includeUsage: boolean;
  /** stream_options.continuous_usage_stats: usage on every chunk instead of null. */
  continuousUsage: boolean;
  /** vLLM's `--enable-prompt-tokens-details`: the final usage says how many prompt tokens the prefix cache held (`prompt_tokens_details.cached_tokens`). */
  promptTokensDetails?: boolean;
  /** `return_token_ids`: the prompt's ids, sent on the first chunk; every chunk then carries its tokens' ids. */
  returnTokenIds?: readonly number[];
  /** `echo`: the prompt's text, sent before the first token's on its chunk. */
  echo?: string;
  /** `echo` with max_tokens 0: the one token generated is counted, but its text is not sent (vLLM's echo_without_generation). */
  echoOnly?: boolean;
}

/**
 * Writes one streamed text completion as vLLM's serving_completion does: headers at once, one
 * chunk per token (no role chunk, unlike chat; held-back bytes give `"text": ""`), finish_reason on the last token's chunk, the
 * optional usage chunk, and `data: [DONE]`.
 */
export class CompletionStreamWriter {
  readonly #res: ServerResponse;
  readonly #body: ChunkedBodyWriter;
  readonly #ident: CompletionIdentity;
  readonly #options: CompletionStreamOptions;
  #ended = false;
  #promptIdsSent = false;
  #echoed = false;

  constructor(res: ServerResponse, ident: CompletionIdentity, options: CompletionStreamOptions) {
    this.#res = res;
    this.#body = new ChunkedBodyWriter(res);
    this.#ident = ident;
    this.#options = options;
  }

  /** Whether [DONE] has been written (a close after this is not a disconnect). */
  get finished(): boolean {
    return this.#ended;
  }

  open(): void {
    this.#res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    this.#res.flushHeaders();
  }

  token(event: TokenEvent): void {
    if (this.#ended) return;
    const { promptTokens, includeUsage, continuousUsage } = this.#options;
    const last = event.finishReason !== null;
    const totals = continuousUsage ? usage(promptTokens, event.completionTokens) : null;
    const generated = this.#options.echoOnly ? '' : event.text;
    const text = this.#echoed ? generated : (this.#options.echo ?? '') + generated;
    this.#echoed = true;
    this.#send(textChunk(this.#ident, text, event.finishReason, last ? (event.stopReason ?? null) : null, totals, this.#tokenIds(event)));
    if (!last) return;
    if (includeUsage) this.#send(textUsageChunk(this.#ident, finalUsage(promptTokens, event.completionTokens, event.cachedTokens, this.#options.promptTokensDetails)));
    this.#res.end('data: [DONE]\n\n');
    this.#ended = true;
  }

  #tokenIds(event: TokenEvent): ChoiceTokenIds | undefined {
    const promptIds = this.#options.returnTokenIds;
    if (promptIds === undefined) return undefined;
    const prompt = this.#promptIdsSent ? null : promptIds;
    this.#promptIdsSent = true;
    return { prompt, generated: eventTokenIds(event) };
  }

  #send(chunk: object): void {
    this.#body.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
}
