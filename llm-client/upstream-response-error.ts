import { UpstreamResponseError } from '../core/errors.ts';
import { upstreamErrorMessage } from './upstream-error-message.ts';

// Error bodies are small; a server streaming megabytes of HTML error page is cut here.
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Reads a non-2xx body (bounded) into an error carrying the upstream's own message. */
export async function readUpstreamResponseError(
  status: number,
  body: AsyncIterable<Uint8Array>,
): Promise<UpstreamResponseError> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size >= MAX_ERROR_BODY_BYTES) break;
  }
  return upstreamResponseError(status, chunks);
}

/** The error for a non-2xx answer whose body (or its first MAX_ERROR_BODY_BYTES) is `chunks`. */
export function upstreamResponseError(status: number, chunks: readonly Uint8Array[]): UpstreamResponseError {
  const text = Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY_BYTES);
  let message: string | undefined;
  try {
    message = upstreamErrorMessage(JSON.parse(text));
  } catch {
    message = text.trim().slice(0, 1000) || undefined;
  }
  return new UpstreamResponseError(status, message ?? `upstream answered HTTP ${status}`);
}
