import { UpstreamContextLengthError, UpstreamMaxTokensTooLargeError, type ContextLimits } from '../core/errors.ts';
import type { ChatMessage } from './chat-request-schema.ts';
import type { Timeline } from './timeline.ts';

/** How many times one round is sent again with its tool results cut shorter (estimates from tokens to bytes can fall short). */
const MAX_FITS = 2;

export interface RoundResendOptions {
  round: number;
  /** What is left of the request's max_tokens for this round. */
  maxTokens: number | undefined;
  timeline: Timeline;
  /** The conversation with this request's tool results cut to fit the context, or undefined where that cannot help. */
  fitToContext?: (limits: ContextLimits) => { messages: ChatMessage[]; cap: number } | undefined;
}

/** What a refused round goes out again with. */
export type Resend = { messages: ChatMessage[] } | { maxTokens: number };

/**
 * A later round that the upstream refused before it decoded anything, because the calls and
 * results since round 1 have grown its prompt: sent again rather than failing a request whose
 * client asked for nothing wrong. Round 1's refusal is the client's own request refused, and goes
 * to it as the upstream words it.
 */
export class RoundResend {
  private fits = 0;
  private resentLimit = false;
  private readonly options: RoundResendOptions;

  constructor(options: RoundResendOptions) {
    this.options = options;
  }

  /**
   * What to send the round again with after `err`, or undefined to let the error stand.
   * `untouched`: nothing was decoded, the request is not aborted and the round's machinery built.
   */
  after(err: unknown, untouched: boolean, currentMaxTokens: number | undefined): Resend | undefined {
    const { round, timeline } = this.options;
    if (round === 1 || !untouched) return undefined;
    // The prompt past the context, or so near it that the reply has little room: this request's
    // tool results cut shorter (observation-fit.ts), at most MAX_FITS times. Tried first: a
    // smaller max_tokens would leave the reply that little room.
    const refused = err instanceof UpstreamContextLengthError || err instanceof UpstreamMaxTokensTooLargeError;
    if (refused && this.fits < MAX_FITS) {
      const fitted = this.options.fitToContext?.(err);
      if (fitted !== undefined) {
        this.fits++;
        timeline.mark('error', {
          round,
          detail: `the prompt, ${err.inputTokens} tokens, left the reply too little of the context of ${err.maxModelLen}: this request's tool results were cut to ${fitted.cap} bytes each and the round sent again`,
        });
        return { messages: fitted.messages };
      }
    }
    // What the rounds before left of max_tokens can be more than this prompt leaves of the
    // context, and vLLM refuses the request whole ("'max_tokens' … is too large"): asked once
    // more for what the context leaves. A second refusal stands.
    const { maxTokens } = this.options;
    if (this.resentLimit || maxTokens === undefined || !(err instanceof UpstreamMaxTokensTooLargeError)) return undefined;
    const fit = err.tokensThatFit;
    if (fit < 1 || fit >= maxTokens) return undefined;
    this.resentLimit = true;
    timeline.mark('error', { round, detail: `the upstream refused max_tokens ${currentMaxTokens}, more than the prompt leaves of the context: sent again with ${fit}` });
    return { maxTokens: fit };
  }
}
