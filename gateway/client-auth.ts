import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AuthenticationError } from '../core/errors.ts';

/**
 * A browser's WebSocket cannot send an Authorization header, only subprotocols: a key offered as
 * the subprotocol `openai-insecure-api-key.<key>` counts, as OpenAI's Realtime API takes it.
 */
export const KEY_SUBPROTOCOL_PREFIX = 'openai-insecure-api-key.';

/**
 * Who a request is for: the id of the API key it came with (16 hex digits of the key's sha256),
 * or undefined on a gateway without keys. Requests of one key may share what another key's may
 * not: a kept plugin process (reuseProcess), a request's timeline.
 */
export type ClientKeyId = string | undefined;

/**
 * Checks the request's `Authorization: Bearer <key>` against the configured keys (none: open)
 * and returns the key's id; with `subprotocolKey`, a WebSocket upgrade's key subprotocol is
 * accepted too.
 */
export function authenticate(req: IncomingMessage, keys: readonly string[], options: { subprotocolKey?: boolean } = {}): ClientKeyId {
  if (keys.length === 0) return undefined;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
  const given = bearer ?? (options.subprotocolKey ? subprotocolKey(req) : undefined) ?? '';
  // Digests of equal length, every key compared: neither a key's length nor which key matched
  // shows in how long a refusal takes (a length check first, and `some` stopping at a match, did).
  const givenDigest = digest(given);
  let ok = false;
  for (const key of keys) ok = timingSafeEqual(digest(key), givenDigest) || ok;
  if (!ok) throw new AuthenticationError();
  return givenDigest.toString('hex', 0, 8);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function subprotocolKey(req: IncomingMessage): string | undefined {
  const offered = req.headers['sec-websocket-protocol']?.split(',') ?? [];
  return offered.map((p) => p.trim()).find((p) => p.startsWith(KEY_SUBPROTOCOL_PREFIX))?.slice(KEY_SUBPROTOCOL_PREFIX.length);
}
