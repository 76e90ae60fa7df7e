import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkedBodyWriter } from '../../core/chunked-body-writer.ts';
import { parseResponses, pipelined } from '../support/raw-http.ts';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server whose every response is written by `respond`; resolves with its base URL. */
async function serve(respond: (res: ServerResponse, nth: number) => void): Promise<string> {
  let nth = 0;
  const server = createServer((_req, res) => respond(res, nth++));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => new Promise((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('ChunkedBodyWriter', () => {
  it('writes one well-formed chunk per call, in order, before and after the head went out', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = new ChunkedBodyWriter(res);
      expect(body.started).toBe(false);
      body.write('data: 1\n\n');
      expect(body.started).toBe(true);
      body.write('data: é\n\n');
      setTimeout(() => {
        body.write('data: 3\n\n');
        res.end('data: [DONE]\n\n');
      }, 5);
    });
    const [response] = parseResponses(await pipelined(url, [{}]), 1);
    expect(response!.chunks).toEqual(['data: 1\n\n', 'data: é\n\n', 'data: 3\n\n', 'data: [DONE]\n\n']);
  });

  it('keeps pipelined responses apart: a response waiting for the socket writes through node:http', async () => {
    const url = await serve((res, nth) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = new ChunkedBodyWriter(res);
      // The second response is written while the first still holds the connection.
      for (let i = 0; i < 3; i++) body.write(`data: r${nth}-${i}\n\n`);
      setTimeout(() => res.end('data: [DONE]\n\n'), nth === 0 ? 30 : 0);
    });
    const responses = parseResponses(await pipelined(url, [{}, {}]), 2);
    expect(responses.map((r) => r.chunks.join(''))).toEqual([0, 1].map((n) => `data: r${n}-0\n\ndata: r${n}-1\n\ndata: r${n}-2\n\ndata: [DONE]\n\n`));
  });
});
