import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './json-response.ts';

/**
 * vLLM's AuthenticationMiddleware (`--api-key`, or VLLM_API_KEY): only paths under /v1 need
 * `Authorization: Bearer <key>` (scheme in any case); /health, /metrics, /version, /ping and the
 * rest stay open, and so does every OPTIONS request (CORS preflights carry no credentials).
 */
export class ApiKeyAuth {
  readonly #keyHash: Buffer;

  constructor(apiKey: string) {
    this.#keyHash = sha256(apiKey);
  }

  /** Whether the request may go on; if not, the 401 has been sent. */
  admit(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (req.method === 'OPTIONS' || !path.startsWith('/v1') || this.#verify(req.headers.authorization)) return true;
    req.resume();
    // vLLM's exact body: a bare string, not its usual error object.
    sendJson(res, 401, { error: 'Unauthorized' });
    return false;
  }

  #verify(authorization: string | undefined): boolean {
    if (authorization === undefined) return false;
    const space = authorization.indexOf(' ');
    const scheme = space < 0 ? authorization : authorization.slice(0, space);
    if (scheme.toLowerCase() !== 'bearer') return false;
    // Compared as hashes of equal length, in constant time, as vLLM compares them.
    return timingSafeEqual(sha256(space < 0 ? '' : authorization.slice(space + 1)), this.#keyHash);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
