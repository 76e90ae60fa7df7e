import type { IncomingMessage } from 'node:http';
import { InvalidRequestError } from '../core/errors.ts';

/** The body passed the size limit; answered with 413. */
export class BodyTooLargeError extends InvalidRequestError {
  readonly limit: number;
  constructor(limit: number) {
    super(`request body is larger than ${limit} bytes`);
    this.limit = limit;
  }
}

/** The whole request body; rejects with BodyTooLargeError past `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (part: Buffer) => {
      if (tooLarge) return; // keep draining so the 413 can still be written on this socket
      size += part.length;
      if (size > limit) {
        tooLarge = true;
        parts.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      parts.push(part);
    });
    req.on('end', () => {
      if (!tooLarge) resolve(Buffer.concat(parts));
    });
    req.on('error', reject);
  });
}
