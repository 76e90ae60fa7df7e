import type { IncomingMessage } from 'node:http';
import { InvalidRequestError } from '../core/errors.ts';

/** Reads a JSON body with a size cap, so one huge request cannot exhaust the gateway's memory. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new InvalidRequestError(`request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new InvalidRequestError('request body is empty; expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
}
