import { UpstreamProtocolError } from '../core/errors.ts';
import type { UpstreamPart } from './upstream-parts.ts';

/**
 * How long the stream waits, once the answer is whole, for the server to end the response. vLLM
 * ends it at once, and waiting for that end keeps the socket for the next request; a server that
 * keeps the response open costs this delay and its socket, not the idle timeout.
 */
const AFTER_WHOLE_MS = 250;

/**
 * How long the stream waits, after the finish_reason and each chunk that follows it, for the usage
 * chunk (the request always asks for it: chat-completion-request.ts) or [DONE]. vLLM, SGLang and
 * llama.cpp's server write the usage chunk in the same step as the finish; a server or proxy that
 * sends neither within this time and keeps the response open has nothing left to send.
 */
const AFTER_FINISH_MS = 1_000;

/**
 * The end of one answer: what it still needs, and how long the stream waits for it.
 *
 * An answer is whole at `data: [DONE]`, or once the usage chunk has come after the finish_reason
 * (`n` is always 1, so one finish is every choice's): a server that then never ends the response
 * (llama.cpp's server behind some proxies, a proxy that drops [DONE] and holds the connection)
 * would otherwise hold the client's request until the idle timeout. A finish with no usage after
 * it (a server that puts usage on the finish chunk, or sends none) is waited on for
 * AFTER_FINISH_MS of silence, so a usage chunk still on its way is not cut off. The wait after the
 * finish stops while the consumer is paused (the socket is not read then); the wait after a whole
 * answer runs on, since nothing more is needed from it.
 *
 * When a wait runs out, `onOver` is called: the stream ends the answer as it stands and destroys
 * the socket, whose response was not read to its end and cannot carry another request.
 */
export class AnswerTail {
  readonly #onOver: () => void;
  /** Whether reads or events are held, not yet handed over: the wait after the finish goes on until they are. */
  readonly #holding: () => boolean;
  #finished = false;
  #whole = false;
  #paused = false;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  constructor(onOver: () => void, holding: () => boolean) {
    this.#onOver = onOver;
    this.#holding = holding;
  }

  /** A finish_reason has been delivered: the model is done. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Nothing more is needed: what follows is read and dropped, and a failure of the socket only ends the stream. */
  get whole(): boolean {
    return this.#whole;
  }

  /** Called for each part as it is delivered. */
  delivered(part: UpstreamPart): void {
    if (part.type === 'finish') this.#finished = true;
    // Usage on the finish chunk itself (continuous_usage_stats) comes before its finish part: only
    // the usage chunk after it is the last.
    else if (part.type === 'usage' && this.#finished) this.#becomeWhole();
  }

  /** Called after each chunk's parts have gone out: the wait after the finish starts again. */
  chunkHandled(): void {
    if (this.#finished && !this.#whole && !this.#paused) this.#waitForRest();
  }

  done(): void {
    if (!this.#whole) this.#becomeWhole();
  }

  pause(): void {
    this.#paused = true;
    if (!this.#whole) this.#clear();
  }

  resume(): void {
    this.#paused = false;
    this.chunkHandled();
  }

  clear(): void {
    this.#clear();
  }

  /** Why a body that ended now is no whole answer (`started`: a chunk came); undefined when it is one. */
  endFault(started: boolean): UpstreamProtocolError | undefined {
    if (!started) return new UpstreamProtocolError('upstream ended the stream without sending any chunk');
    // vLLM, SGLang and llama.cpp end every whole answer with a finish_reason: a body that ends
    // without one was cut short (a proxy's timeout, a server that logged an error and stopped),
    // and passed on it would read as an answer the model finished.
    if (!this.#finished) return new UpstreamProtocolError('upstream ended the stream without a finish_reason: the answer was cut short');
    return undefined;
  }

  #becomeWhole(): void {
    this.#whole = true;
    this.#clear();
    this.#timer = setTimeout(this.#onOver, AFTER_WHOLE_MS);
  }

  #waitForRest(): void {
    this.#clear();
    this.#timer = setTimeout(this.#restOverdue, AFTER_FINISH_MS);
  }

  readonly #restOverdue = (): void => {
    // Timers run before the poll phase of the event loop: after a loop stalled for longer than the
    // wait, the usage chunk may be in the socket, unread. The check after the next poll sees it.
    this.#immediate = setImmediate(() => {
      this.#immediate = undefined;
      if (this.#paused || this.#whole) return;
      if (this.#holding()) return this.#waitForRest();
      // Taken as whole from here: what the socket does as it is closed is no failure of the answer.
      this.#whole = true;
      this.#onOver();
    });
  };

  #clear(): void {
    clearTimeout(this.#timer);
    clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
  }
}
