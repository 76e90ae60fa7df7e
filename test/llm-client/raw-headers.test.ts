import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { UpstreamResponseError } from '../../core/errors.ts';
import { streamChatCompletion } from '../../llm-client/index.ts';
import { MODEL } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { collect, startTestUpstream } from './upstream-test-server.ts';

const track = trackedUpstreams();

describe('an upstream error header with a byte past ASCII', () => {
  // The gateway writes an upstream 429's Retry-After back to its client (gateway/error-response.ts).
  // Read as UTF-8, the lone byte 0xE9 became U+FFFD, which writeHead refuses (ERR_INVALID_CHAR):
  // the client's error answer itself failed. Read as latin1, as undici and Node read header
  // bytes, it is 'é', which writeHead writes back as that byte.
  it('keeps Retry-After as its bytes (latin1), a value Node can write back', async () => {
    const upstream = await track(
      startTestUpstream((_req, res) => {
        // Node writes a header string's characters below U+0100 as one byte each: this sends 0xE9.
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '5\u00e9' });
        res.end('{"error":{"message":"slow down"}}');
      }),
    );
    const { error } = await collect(
      streamChatCompletion({ baseUrl: upstream.baseUrl, body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, signal: new AbortController().signal }),
    );
    expect(error).toBeInstanceOf(UpstreamResponseError);
    const retryAfter = (error as UpstreamResponseError).retryAfter!;
    expect(retryAfter).toBe('5\u00e9');
    expect(() => validateHeaderValue('retry-after', retryAfter)).not.toThrow();
  });
});
