import { UpstreamModelNotFoundError, UpstreamResponseError } from '../core/errors.ts';
import { upstreamErrorMessage, upstreamErrorParam } from './upstream-error-message.ts';

// Error bodies are small; a server streaming megabytes of HTML error page is cut here.
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** How much of a non-JSON error body the client's message quotes. */
const MAX_MESSAGE_CHARS = 300;

/** Reads a non-2xx body (bounded) into an error carrying the upstream's own message. */
export async function readUpstreamResponseError(
  status: number,
  body: AsyncIterable<Uint8Array>,
): Promise<UpstreamResponseError> {
  const errorBody = new ErrorBody(status);
  for await (const chunk of body) if (errorBody.add(chunk)) break;
  return errorBody.error();
}

/** A non-2xx body taken read by read (undici pushes it), kept up to MAX_ERROR_BODY_BYTES. */
export class ErrorBody {
  readonly status: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;

  constructor(status: number) {
    this.status = status;
  }

  /** Keeps one read; true once the bound is reached and the rest need not be read. */
  add(chunk: Uint8Array): boolean {
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
    return this.#size >= MAX_ERROR_BODY_BYTES;
  }

  /** The error for what was read so far. */
  error(): UpstreamResponseError {
    return upstreamResponseError(this.status, this.#chunks);
  }
}

/** The error for a non-2xx answer whose body (or its first MAX_ERROR_BODY_BYTES) is `chunks`. */
export function upstreamResponseError(status: number, chunks: readonly Uint8Array[]): UpstreamResponseError {
  const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
  let message: string | undefined;
  let param: string | null = null;
  try {
    const body: unknown = JSON.parse(text);
    message = upstreamErrorMessage(body);
    param = upstreamErrorParam(body);
  } catch {
    message = plainText(text) || undefined;
  }
  if (status === 404 && message !== undefined && MODEL_DOES_NOT_EXIST.test(message)) return new UpstreamModelNotFoundError(message);
  return new UpstreamResponseError(status, message ?? bareStatusMessage(status), param);
}

/**
 * How vLLM ("The model `x` does not exist.") and OpenAI ("… does not exist or you do not have
 * access to it.") word a 404 for a model they do not serve; any other 404 stays as it is.
 */
const MODEL_DOES_NOT_EXIST = /\bmodel\b.*\bdoes not exist\b/i;

/** The message of an error whose body said nothing: the status alone. */
export function bareStatusMessage(status: number): string {
  return `upstream answered HTTP ${status}`;
}

/** A body that is not JSON (a proxy's or a web server's HTML error page) as one short line for the client's message. */
function plainText(text: string): string {
  const words = text
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return words.length > MAX_MESSAGE_CHARS ? `${words.slice(0, MAX_MESSAGE_CHARS)}…` : words;
}
