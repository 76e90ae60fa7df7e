import { describe, expect, it } from 'vitest';
import { ClientCalls } from '../../gateway/client-calls.ts';

type Sent = { type: string; index: number; callId?: string; name?: string; text?: string };

function clientCalls(holdUntilValid: boolean, indices = { next: 0 }) {
  const sent: Sent[] = [];
  return { calls: new ClientCalls((event) => sent.push(event), { holdUntilValid, indices }), sent, indices };
}

describe('ClientCalls', () => {
  it('streams a call as it is decoded, its argument deltas adding up to the arguments', () => {
    const { calls, sent } = clientCalls(false);
    calls.start('c1', 'get_weather');
    calls.args('c1', '{"city": ');
    calls.args('c1', '"Paris"}');
    calls.end('c1', { city: 'Paris' });
    expect(sent).toEqual([
      { type: 'client-call-start', index: 0, callId: 'c1', name: 'get_weather' },
      { type: 'client-call-args', index: 0, text: '{"city": ' },
      { type: 'client-call-args', index: 0, text: '"Paris"}' },
    ]);
    expect(calls.completed()).toEqual([{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }]);
  });

  it('under validation, sends a call only once it is whole and passed, in one piece; a rejected or malformed one never', () => {
    const { calls, sent } = clientCalls(true);
    calls.start('bad', 'get_weather');
    calls.args('bad', '{"city": 5');
    calls.reject('bad', 'argument "city": expected string');
    calls.start('broken', 'get_weather');
    calls.args('broken', '{"city": ]');
    calls.malformed('broken');
    calls.start('good', 'get_weather');
    calls.args('good', '{"city": ');
    expect(sent).toEqual([]);
    calls.args('good', '"Paris"}');
    calls.end('good', { city: 'Paris' });
    expect(sent).toEqual([
      { type: 'client-call-start', index: 0, callId: 'good', name: 'get_weather' },
      { type: 'client-call-args', index: 0, text: '{"city": "Paris"}' },
    ]);
    expect(calls.completed().map((c) => c.id)).toEqual(['good']);
    expect(calls.rejected()).toEqual([{ callId: 'bad', name: 'get_weather', reason: 'argument "city": expected string', undeclared: false, args: {} }]);
  });

  it("numbers calls across a session's rounds, so a later round's call never shares an index with one already streamed", () => {
    const indices = { next: 0 };
    const round1 = clientCalls(false, indices);
    // Streamed, then the round was cut (a gateway tool rejected a sibling) before this call ended.
    round1.calls.start('r1', 'get_weather');
    round1.calls.args('r1', '{"ci');
    const round2 = clientCalls(false, indices);
    round2.calls.start('r2', 'get_weather');
    round2.calls.end('r2', { city: 'Paris' });
    expect(round1.sent.map((e) => e.index)).toEqual([0, 0]);
    expect(round2.sent.map((e) => e.index)).toEqual([1, 1]);
  });

  it('says whether a call the client was sent is still being decoded, and when a call ends', () => {
    let ended = 0;
    const calls = new ClientCalls(() => {}, { holdUntilValid: false, indices: { next: 0 }, onCallEnded: () => ended++ });
    expect(calls.streaming).toBe(false);
    calls.start('c1', 'get_weather');
    calls.args('c1', '{"city": "Par');
    expect(calls.streaming).toBe(true);
    calls.args('c1', 'is"}');
    calls.end('c1', { city: 'Paris' });
    expect([calls.streaming, ended]).toEqual([false, 1]);
    calls.start('c2', 'get_weather');
    calls.malformed('c2');
    expect([calls.streaming, ended]).toEqual([false, 2]);
    // Held under validation, a call is not the client's until it is whole: nothing of it is streaming.
    const held = new ClientCalls(() => {}, { holdUntilValid: true, indices: { next: 0 } });
    held.start('c3', 'get_weather');
    expect(held.streaming).toBe(false);
  });

  it('gives a call without raw argument text (a code fence) its arguments as one JSON delta', () => {
    const { calls, sent } = clientCalls(false);
    calls.start('c1', 'python');
    calls.end('c1', { code: 'print(1)\n' });
    expect(sent[1]).toEqual({ type: 'client-call-args', index: 0, text: '{"code":"print(1)\\n"}' });
  });
});
