import { UpstreamProtocolError, type UpstreamError } from '../core/errors.ts';
import { rawHeaderValue } from './raw-headers.ts';
import { bareStatusMessage, ErrorBody } from './upstream-response-error.ts';

/**
 * An answer that brings no token stream: a non-2xx status, or a 2xx that is not an event stream
 * (a proxy's sign-in page, a server's error as JSON under a 200). Its body is read, bounded, for
 * what it says, and the error it stands for fails the stream.
 */
export class ErrorAnswer {
  readonly #body: ErrorBody;
  /** The content type of a 2xx that is not an event stream. */
  readonly #notEventStream: string | undefined;

  private constructor(body: ErrorBody, notEventStream?: string) {
    this.#body = body;
    this.#notEventStream = notEventStream;
  }

  /** The error answer that a status line and headers start; undefined for an event stream. */
  static of(statusCode: number, rawHeaders: Buffer[] | string[] | null): ErrorAnswer | undefined {
    if (statusCode > 299) {
      return new ErrorAnswer(
        new ErrorBody(statusCode, {
          retryAfter: rawHeaderValue(rawHeaders, 'retry-after') || undefined,
          location: rawHeaderValue(rawHeaders, 'location') || undefined,
        }),
      );
    }
    const contentType = rawHeaderValue(rawHeaders, 'content-type');
    if (contentType.toLowerCase().includes('text/event-stream')) return undefined;
    return new ErrorAnswer(new ErrorBody(statusCode), contentType || 'no content type');
  }

  /** Keeps one read of the body; true once its bound is reached and the rest need not be read. */
  add(chunk: Uint8Array): boolean {
    return this.#body.add(chunk);
  }

  /** The error the body read so far (whole, or to its bound) stands for. */
  error(): UpstreamError {
    const error = this.#body.error();
    if (this.#notEventStream === undefined) return error;
    const said = error.message === bareStatusMessage(error.status) ? '' : `: ${error.message}`;
    return new UpstreamProtocolError(`upstream answered ${this.#notEventStream}, not text/event-stream${said}`);
  }
}
