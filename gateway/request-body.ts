import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../core/errors.ts';

/**
 * Reads a JSON body with a size cap, so one huge request cannot exhaust the gateway's memory.
 * Plain listeners rather than `for await`: a chat request's body is one read, and the async
 * iterator's machinery cost more than the read itself on the way to the first token.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type?.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json') {
    // Dropped unread, so the refusal still reaches the client.
    req.resume();
    return Promise.reject(new UnsupportedMediaTypeError(type));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: unknown): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', finish);
      req.off('close', onClose);
      if (error !== undefined) reject(error);
      else {
        try {
          resolve(parseJson(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        finish(new InvalidRequestError(`request body exceeds ${maxBytes} bytes`));
        // The rest is read and dropped, never kept, so the 400 still reaches the client.
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
