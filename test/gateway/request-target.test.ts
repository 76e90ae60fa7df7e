import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';

/** One request as raw bytes (node:http and fetch would not send these targets), and all the gateway answers. */
function exchange(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (b: Buffer) => (text += b.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    // A gateway that threw in its request listener never answers: fail here, not at the test's timeout.
    socket.setTimeout(2000, () => socket.destroy());
    socket.write(head);
  });
}

describe('request targets node:http lets through but no URL parser reads', () => {
  let gateway: GatewayHandle;
  beforeAll(async () => {
    // Nothing is sent upstream here: nothing listens on port 9 (discard) on loopback.
    gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('answers them in the OpenAI shape instead of throwing in the request listener, and keeps serving', async () => {
    for (const [head, status, code] of [
      // A target that starts with // is a path (no such route), not a URL naming the host "[".
      ['GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 404, 'not_found'],
      ['GET http://[/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 400, 'invalid_request'],
      // Under Expect: 100-continue the target is read in another listener first.
      ['POST //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n', 404, 'not_found'],
      ['POST http://[/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n', 400, 'invalid_request'],
    ] as const) {
      const answer = (await exchange(gateway.port, head)).replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      expect(answer, head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(json).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code } });
    }
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });
});
