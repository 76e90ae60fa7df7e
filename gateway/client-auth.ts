import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AuthenticationError } from '../core/errors.ts';

/** Checks the request's `Authorization: Bearer <key>` against the configured keys (none: open). */
export function authenticate(req: IncomingMessage, keys: readonly string[]): void {
  if (keys.length === 0) return;
  const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '';
  const givenBytes = Buffer.from(given);
  const ok = keys.some((k) => {
    const keyBytes = Buffer.from(k);
    return keyBytes.length === givenBytes.length && timingSafeEqual(keyBytes, givenBytes);
  });
  if (!ok) throw new AuthenticationError();
}
