import type { IncomingMessage } from 'node:http';
import { ClientAbortedError, InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../core/errors.ts';
import { bodyRefusal } from './server-connection-hooks.ts';

/**
 * Reads a JSON body with a size cap, so one huge request cannot exhaust the gateway's memory.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = req.headers['content-type'];
  if (!sentAsJson(req)) {
    // Dropped unread, so the refusal still reaches the client.
    req.resume();
    throw new UnsupportedMediaTypeError(type);
  }
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    req.resume();
    throw UnsupportedMediaTypeError.encoding(encoding);
  }
  const bytes = await readBodyBytes(req, maxBytes);
  return parseJson(jsonText(bytes));
}

/**
 * The body's text, less a leading UTF-8 byte order mark: a file saved by Windows Notepad or
 * PowerShell 5 and sent with `curl --data-binary @body.json` has one, and vLLM's FastAPI reads
 * it (Python's json.loads skips it in bytes), where JSON.parse refuses it.
 */
export function jsonText(bytes: Buffer): string {
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString('utf8', bom ? 3 : 0);
}

/**
 * `application/json`, or no Content-Type from a client that is no browser. FastAPI (vLLM) reads a
 * typeless body as JSON, and scripts send one (`requests.post(url, data=json.dumps(body))`). A web
 * page can send a typeless POST to any address without a preflight (a Blob without a type), but
 * the browser always adds its Origin to a POST, so a typeless body with an Origin stays refused:
 * it could run the tools of a keyless gateway for any site its user opens.
 */
export function sentAsJson(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return req.headers.origin === undefined;
  return type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * A whole request body, refused past `maxBytes` with a 413: at once when its declared length is
 * over, else once the bytes read are (the rest is read and dropped so that the answer still
 * reaches the client). A client that goes away before its body ends is ClientAbortedError. Plain
 * listeners rather than `for await`: a chat request's body is one read, and the async iterator's
 * machinery cost more than the read itself on the way to the first token.
 */
export function readBodyBytes(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (Number(req.headers['content-length']) > maxBytes) {
    req.resume();
    return Promise.reject(new PayloadTooLargeError(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: unknown): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onClose);
      req.off('close', onClose);
      if (error !== undefined) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        finish(new PayloadTooLargeError(maxBytes));
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish();
    // Node says "aborted" (ECONNRESET) when the connection closes mid-body: the client left, unless
    // the server closed it, answering the body's lateness (408) itself.
    const onClose = (): void => finish(bodyRefusal(req) ?? new ClientAbortedError());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onClose);
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
