import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../../gateway/client-auth.ts';

const withHeaders = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const bearer = (key: string) => withHeaders({ authorization: `Bearer ${key}` });

describe('authenticate', () => {
  const keys = ['first-key', 'a-second-and-longer-key'];

  it('takes any configured key, and only a whole one', () => {
    for (const key of keys) expect(() => authenticate(bearer(key), keys)).not.toThrow();
    for (const wrong of ['first-ke', 'first-keyy', 'a-second-and-longer-ke', 'FIRST-KEY', '']) {
      expect(() => authenticate(bearer(wrong), keys), wrong).toThrow(expect.objectContaining({ code: 'invalid_api_key' }));
    }
    expect(() => authenticate(withHeaders({}), keys)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }));
  });

  it('takes the key subprotocol only where asked to (a WebSocket upgrade)', () => {
    const upgrade = withHeaders({ 'sec-websocket-protocol': 'conveyor.events, openai-insecure-api-key.first-key' });
    expect(() => authenticate(upgrade, keys, { subprotocolKey: true })).not.toThrow();
    expect(() => authenticate(upgrade, keys)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }));
  });

  it('lets everything through when no key is configured', () => {
    expect(() => authenticate(withHeaders({}), [])).not.toThrow();
  });
});
