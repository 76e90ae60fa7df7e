import type { ServerResponse } from 'node:http';
import type { SequencePlan, TokenEvent } from './sequence.ts';
import { mergeWhileBlocked } from './merged-deltas.ts';
import type { SimContext } from './sim-context.ts';

/** A streamed answer's writer, fed token by token by the engine loop. */
export interface TokenStreamWriter {
  readonly finished: boolean;
  open(): void;
  token(event: TokenEvent): void;
}

/** Plays `plan` through the engine into a stream; a client that goes away before the end aborts the sequence. */
export function playStreamed(ctx: SimContext, plan: SequencePlan, res: ServerResponse, writer: TokenStreamWriter): void {
  writer.open();
  const handle = ctx.engine.submit(plan, { onToken: mergeWhileBlocked(res, (e) => writer.token(e)), onAborted: () => res.destroy() });
  res.on('close', () => {
    if (!writer.finished) handle.abort();
  });
}

/** The event of a sequence's last token. */
export type LastTokenEvent = TokenEvent & { finishReason: NonNullable<TokenEvent['finishReason']> };

/**
 * Plays `plan` to its end, then `answer` sends the one response from the whole text, the last
 * token's event and every generated token's id (EOS included, as vLLM's `output.token_ids`).
 */
export function playWhole(ctx: SimContext, plan: SequencePlan, res: ServerResponse, answer: (text: string, last: LastTokenEvent, tokenIds: readonly number[]) => void): void {
  let text = '';
  const tokenIds: number[] = [];
  const handle = ctx.engine.submit(plan, {
    onToken(event) {
      text += event.text;
      tokenIds.push(event.tokenId);
      if (event.finishReason !== null) answer(text, event as LastTokenEvent, tokenIds);
    },
    onAborted: () => res.destroy(),
  });
  res.on('close', () => {
    if (!res.writableEnded) handle.abort();
  });
}
