import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../gateway/server.ts';
import { closedAfterEach } from '../support/closed-after-each.ts';

const { keep } = closedAfterEach();

/** What the gateway writes back on a connection that sends `text`, until it closes. */
function answerTo(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

function openAIError(answer: string): { status: number; type: string | undefined; error: Record<string, unknown> } {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
  return { status: Number(head.split(' ')[1]), type: /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1], error: (JSON.parse(body) as { error: Record<string, unknown> }).error };
}

// Every error the gateway answers has OpenAI's shape, which the SDKs read the message and code of;
// the answers to what Node's parser refuses (headers too large, a malformed request or chunk, a
// request still arriving past its time limit) had no body at all ("431 status code (no body)").
describe("regression: a request Node's parser refuses is answered in OpenAI's error shape", () => {
  it('says so for headers too large (431) and a malformed request line (400)', async () => {
    const gw = keep(await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() }));
    const large = openAIError(await answerTo(gw.port, `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(large.status).toBe(431);
    expect(large.type).toBe('application/json');
    expect(large.error).toEqual({ message: expect.stringContaining('header'), type: 'invalid_request_error', param: null, code: 'unparsable_request' });
    const garbled = openAIError(await answerTo(gw.port, 'GET /v1/models HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n'));
    expect(garbled.status).toBe(400);
    expect(garbled.error).toMatchObject({ type: 'invalid_request_error', code: 'unparsable_request' });
  });

  it('says so for a body still arriving past requestMs (408)', async () => {
    const gw = keep(await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, clientTimeouts: { headersMs: 300, requestMs: 600 } }, { tools: new Map() }));
    const late = openAIError(await answerTo(gw.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":'));
    expect(late.status).toBe(408);
    expect(late.error).toMatchObject({ type: 'invalid_request_error', code: 'request_timeout', message: expect.stringContaining('requestMs') });
  });
});
