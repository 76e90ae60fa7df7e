import { connect } from 'node:net';
import { expect } from 'vitest';

export interface RawResponse {
  head: string;
  /** The body's chunks, each checked against its size line. */
  chunks: string[];
}

/**
 * Reads `count` HTTP/1.1 responses off one socket and decodes their chunked bodies by hand, so a
 * size line that does not match its bytes, or bytes between responses, fail the test.
 */
export function parseResponses(raw: Buffer, count: number): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  const line = () => {
    const end = raw.indexOf('\r\n', at);
    if (end < 0) throw new Error(`truncated at byte ${at}`);
    const text = raw.subarray(at, end).toString('latin1');
    at = end + 2;
    return text;
  };
  for (let r = 0; r < count; r++) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    const head = raw.subarray(at, headEnd).toString('latin1');
    at = headEnd + 4;
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    const chunks: string[] = [];
    for (;;) {
      const sizeLine = line();
      expect(sizeLine).toMatch(/^[0-9a-f]+$/);
      const size = Number.parseInt(sizeLine, 16);
      if (size === 0) {
        expect(line()).toBe('');
        break;
      }
      chunks.push(raw.subarray(at, at + size).toString('utf8'));
      at += size;
      expect(line()).toBe('');
    }
    out.push({ head, chunks });
  }
  expect(at).toBe(raw.length);
  return out;
}

/** Sends `bodies` as pipelined requests on one connection; resolves with everything read once `count` responses ended. */
export function pipelined(url: string, bodies: unknown[]): Promise<Buffer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    // Garbled framing never shows the expected endings: fail with what arrived instead of hanging.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the ${bodies.length} responses did not end as expected; received: ${Buffer.concat(received).toString('latin1').slice(-400)}`));
    }, 10_000);
    socket.on('error', reject);
    socket.on('data', (b: Buffer) => {
      received.push(b);
      const all = Buffer.concat(received);
      // Each streamed answer ends with [DONE] and the zero-size chunk.
      if (all.toString('latin1').split('data: [DONE]\n\n\r\n0\r\n\r\n').length - 1 === bodies.length) {
        clearTimeout(timer);
        socket.end();
        resolve(all);
      }
    });
    const requests = bodies.map((body) => {
      const json = JSON.stringify(body);
      return `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    });
    socket.write(requests.join(''));
  });
}
