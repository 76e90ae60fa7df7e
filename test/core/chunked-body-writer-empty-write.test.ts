import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkedBodyWriter } from '../../core/chunked-body-writer.ts';
import { parseResponses, pipelined } from '../support/raw-http.ts';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

// An empty write after the first went to the socket framed as a chunk of size 0, which is the
// chunked body's end (RFC 9112 §7.1): the client took the answer as finished there, and what was
// written after it as garbage on the connection. node:http's own write('') sends nothing.
describe('ChunkedBodyWriter: an empty write', () => {
  it('sends nothing, so the body goes on past it', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = new ChunkedBodyWriter(res);
      body.write('data: 1\n\n');
      expect(body.write('')).toBe(true);
      body.write(new Uint8Array(0));
      body.write('data: 2\n\n');
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise((resolve) => server.close(() => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const [response] = parseResponses(await pipelined(url, [{}]), 1);
    expect(response!.chunks).toEqual(['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']);
  });
});
