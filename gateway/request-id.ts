import { randomBytes } from 'node:crypto';

/** The response header that names a chat request's timeline (`GET /v1/requests/:id/timeline`). */
export const REQUEST_ID_HEADER = 'x-conveyor-request-id';
/** The same id under OpenAI's header, where its SDKs read it (`request_id`, an error's `requestID`). */
export const OPENAI_REQUEST_ID_HEADER = 'x-request-id';

const ID_BYTES = 16;
const POOL_IDS = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `chatcmpl-` and 32 random hex digits (16 bytes from the CSPRNG), as before; the bytes are drawn
 * 4 KiB at a time, as crypto.randomUUID does, instead of one synchronous CSPRNG call per request
 * on the way to its first token.
 */
export function newRequestId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * POOL_IDS);
    offset = 0;
  }
  const id = `chatcmpl-${pool.toString('hex', offset, offset + ID_BYTES)}`;
  offset += ID_BYTES;
  return id;
}
