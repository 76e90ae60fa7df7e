import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../core/errors.ts';

/**
 * Reads a JSON body with a size cap, so one huge request cannot exhaust the gateway's memory.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type?.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json') {
    // Dropped unread, so the refusal still reaches the client.
    req.resume();
    throw new UnsupportedMediaTypeError(type);
  }
  const bytes = await readBodyBytes(req, maxBytes);
  return parseJson(bytes.toString('utf8'));
}

/**
 * A whole request body, refused past `maxBytes` (the rest is read and dropped so that the 400
 * still reaches the client). Plain listeners rather than `for await`: a chat request's body is
 * one read, and the async iterator's machinery cost more than the read itself on the way to the
 * first token.
 */
export function readBodyBytes(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: unknown): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', finish);
      req.off('close', onClose);
      if (error !== undefined) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        finish(new InvalidRequestError(`request body exceeds ${maxBytes} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish();
    const onClose = (): void => finish(new Error('the client closed the connection before the request body ended'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', finish);
    req.on('close', onClose);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === '') throw new InvalidRequestError('request body is empty; expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
}
