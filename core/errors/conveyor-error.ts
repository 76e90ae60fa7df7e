/**
 * The root of the gateway's errors (all of them re-exported by core/errors.ts): a stable `code` that
 * gateway/error-response.ts maps to an HTTP status and an OpenAI error body.
 */
export class ConveyorError extends Error {
  /** Stable, machine-readable; never change an existing one. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
