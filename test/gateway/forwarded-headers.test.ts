import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answerHeaders, forwardedHeaders } from '../../gateway/forwarded-headers.ts';

describe('forwarded headers', () => {
  it('leave out the hop-by-hop fields, those Connection names, and the client key', () => {
    const sent = forwardedHeaders({
      connection: 'keep-alive, X-Hop,x-other',
      'keep-alive': 'timeout=5',
      'x-hop': 'secret-for-this-hop',
      'x-other': 'also this hop',
      authorization: 'Bearer client-key',
      host: 'gateway',
      'content-type': 'application/json',
      'x-trace': 'kept',
    });
    expect(sent).toEqual({ 'content-type': 'application/json', 'x-trace': 'kept' });
  });

  it("do the same for an upstream's answer, and leave its CORS fields to the gateway", () => {
    const res = { getHeader: () => undefined } as unknown as ServerResponse;
    const back = answerHeaders({ connection: 'x-upstream-hop', 'x-upstream-hop': '1', 'access-control-allow-origin': '*', 'content-type': 'text/plain' }, res);
    expect(back).toEqual({ 'content-type': 'text/plain' });
  });
});
