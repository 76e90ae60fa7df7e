import { IncrementalDetokenizer } from './incremental-detokenizer.ts';
import { EOS_TOKEN_ID } from './mistral-tokenizer.ts';
import type { StopPoint } from './stop-strings.ts';

export type FinishReason = 'stop' | 'length';

/** What one engine step produced for one sequence. */
export interface TokenEvent {
  tokenId: number;
  /** A delta merged for a slow reader (merged-deltas.ts): the ids of all its tokens, `tokenId` last. Absent: `[tokenId]`. */
  tokenIds?: readonly number[];
  /** Text delta; '' while a multi-byte character is incomplete and for the EOS token. */
  text: string;
  /** Tokens generated so far, this one included (EOS counts, as in vLLM's usage). */
  completionTokens: number;
  finishReason: FinishReason | null;
  /** On the last event of a sequence that a `stop` string or stop token ended: that string or token id (vLLM's `stop_reason`). */
  stopReason?: string | number;
  /** On the last event: the prompt tokens the prefix cache held at admission (vLLM's `num_cached_tokens`). */
  cachedTokens?: number;
}

/** Receives a sequence's tokens; called synchronously from the engine loop. */
export interface SequenceListener {
  onToken(event: TokenEvent): void;
  /** The sequence was dropped without finishing (client went away, or the engine closed). */
  onAborted?(): void;
}

export interface SequencePlan {
  promptTokens: number;
  /** The prompt itself, for the prefix cache; without it nothing is looked up or cached. */
  promptTokenIds?: readonly number[];
  /** The tokens generated before EOS (the reply, and filler for ignore_eos or min_tokens); the engine appends EOS if max_tokens leaves room for it. */
  outputTokenIds: readonly number[];
  maxTokens: number;
  /** Where a request's `stop` string or stop token cuts the answer (request-plan.ts); it applies if max_tokens lets the answer get there. */
  stop?: StopPoint;
  /** Characters of text held back until later tokens or the end (`stopHoldBackChars`). */
  holdBackChars?: number;
}

export type SequenceState = 'waiting' | 'running' | 'finished' | 'aborted';

/**
 * One request inside the engine: a fixed token plan played back one token per step. The
 * decode order is decided up front, so the same request always yields the same tokens.
 */
export class Sequence {
  readonly id: number;
  readonly plan: SequencePlan;
  readonly listener: SequenceListener;
  readonly arrivedAt: number;
  state: SequenceState = 'waiting';
  /** Set by abort(); the engine removes the sequence at the next step boundary. */
  abortRequested = false;
  firstTokenAt: number | null = null;
  lastTokenAt: number | null = null;
  /** Prompt tokens still to prefill (set at admission, less the cached prefix); 0 = decoding. */
  prefillLeft = 0;
  /** Prompt tokens the prefix cache held when the engine admitted it. */
  cachedTokens = 0;
  private readonly schedule: readonly number[];
  private readonly finishReason: FinishReason;
  private readonly stop: StopPoint | undefined;
  private readonly detokenizer = new IncrementalDetokenizer();
  private emitted = 0;
  private textChars = 0;
  /** Generated text not sent yet (the stop strings' hold-back). */
  private held = '';

  constructor(id: number, plan: SequencePlan, listener: SequenceListener, arrivedAt: number) {
    this.id = id;
    this.plan = plan;
    this.listener = listener;
    this.arrivedAt = arrivedAt;
    const ids = plan.outputTokenIds;
    if (plan.stop && plan.stop.tokens <= plan.maxTokens) {
      this.stop = plan.stop;
      this.schedule = ids.slice(0, plan.stop.tokens);
      this.finishReason = 'stop';
    } else if (plan.maxTokens > ids.length) {
      this.schedule = [...ids, EOS_TOKEN_ID];
      this.finishReason = 'stop';
    } else {
      this.schedule = ids.slice(0, plan.maxTokens);
      this.finishReason = 'length';
    }
  }

  get done(): boolean {
    return this.emitted >= this.schedule.length;
  }

  get generatedTokens(): number {
    return this.emitted;
  }

  /** Context length the KV cache holds for this sequence now. */
  get contextTokens(): number {
    return this.plan.promptTokens + this.emitted;
  }

  /** Produces this step's token. Must not be called once `done`. */
  nextToken(): TokenEvent {
    const tokenId = this.schedule[this.emitted];
    if (tokenId === undefined) throw new Error(`sequence ${this.id} has no token left to emit`);
    this.emitted += 1;
    const last = this.done;
    // EOS is a special token: vLLM counts it but never shows it (skip_special_tokens).
    let text = tokenId === EOS_TOKEN_ID && last && this.finishReason === 'stop' && !this.stop ? '' : this.detokenizer.push(tokenId);
    if (this.plan.holdBackChars) text = this.release(text, last);
    else if (this.stop) text = this.cutAtStop(text);
    if (this.stop && last) return { tokenId, text, completionTokens: this.emitted, finishReason: 'stop', stopReason: this.stop.stop, cachedTokens: this.cachedTokens };
    return last ? { tokenId, text, completionTokens: this.emitted, finishReason: this.finishReason, cachedTokens: this.cachedTokens } : { tokenId, text, completionTokens: this.emitted, finishReason: null };
  }

  /** The text stops where the stop string begins (or ends, with include_stop_str_in_output). */
  private cutAtStop(text: string): string {
    const kept = text.slice(0, Math.max(0, this.stop!.textChars - this.textChars));
    this.textChars += kept.length;
    return kept;
  }

  /**
   * With a hold-back, what this token sends: the text held before it and its own, less the last
   * `holdBackChars` characters; at the end all of it, up to where the stop string begins. The
   * hold-back is as long as any unfinished stop string can be, so no part of one ever leaves early.
   */
  private release(text: string, last: boolean): string {
    const held = this.held + text;
    let cut = !last ? Math.max(0, held.length - this.plan.holdBackChars!) : this.stop ? this.stop.textChars - this.textChars : held.length;
    // Never between the two halves of a surrogate pair: a lone half is not text.
    if (!last && cut > 0 && cut < held.length && isHighSurrogate(held.charCodeAt(cut - 1))) cut--;
    this.held = last ? '' : held.slice(cut);
    this.textChars += cut;
    return held.slice(0, cut);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
