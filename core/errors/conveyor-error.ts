/**
 * The root of the gateway's errors (all of them re-exported by core/errors.ts): a stable `code` that
 * gateway/error-response.ts maps to an HTTP status and an OpenAI error body.
 */
export class ConveyorError extends Error {
  /** Stable, machine-readable; never change an existing one. */
  readonly code: string;
  /**
   * What the client's error body says, where it must differ from `message` (which the gateway's
   * own logs keep): the upstream's address is the operator's to know, not every client's.
   */
  readonly clientMessage?: string;
  /**
   * What the request had done before it failed, where sending it again repeats it (tools a later
   * round's failure leaves run): the client's error body ends with it.
   */
  afterTools?: string;
  constructor(code: string, message: string, options?: { cause?: unknown; clientMessage?: string }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    if (options?.clientMessage !== undefined) this.clientMessage = options.clientMessage;
  }
}
