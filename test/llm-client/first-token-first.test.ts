import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { pumpChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL, vllmChunk } from './fixtures/vllm-streams.ts';

/**
 * Two streams whose socket reads the test plays by hand, through the dispatcher seam: the order
 * of parts within one I/O phase is the behaviour under test, and real sockets give no control
 * over which reads land in the same phase (the overhead benchmark measures the effect on real ones).
 */
function handStream(name: string, log: string[], { writeLater = false, batchDelivery }: { writeLater?: boolean; batchDelivery?: (deliver: () => void) => void } = {}) {
  let handler: Dispatcher.DispatchHandler | undefined;
  const dispatcher = {
    dispatch(_options: unknown, h: Dispatcher.DispatchHandler) {
      handler = h;
      // undici calls onConnect as it writes the request: on a reused socket, from an immediate.
      if (!writeLater) h.onConnect?.(() => {});
      return true;
    },
  } as unknown as Dispatcher;
  const stream = pumpChatCompletion(
    { baseUrl: 'http://upstream.invalid/v1', body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, signal: new AbortController().signal, dispatcher, batchDelivery },
    (part: UpstreamPart) => {
      if (part.type === 'content') log.push(`${name}:${part.text}`);
      if (part.type === 'end') log.push(`${name}:end`);
    },
  );
  const h = () => handler!;
  const write = () => h().onConnect?.(() => {});
  // A stream written later is not answered in these tests.
  if (!writeLater) h().onHeaders!(200, [Buffer.from('content-type'), Buffer.from('text/event-stream')], () => {}, '');
  return {
    stream,
    write,
    read: (text: string) => h().onData!(Buffer.from(text)),
    end: () => h().onComplete!([]),
  };
}

const token = (text: string) => vllmChunk({ content: text });
const nextPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('first tokens first', () => {
  it('delivers a first token at once, and a generating stream’s later tokens after the I/O phase, in order', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(vllmChunk({ role: 'assistant', content: '' }) + token('a1'));
    expect(log).toEqual(['a:a1']);

    // One phase: a's next tokens are read first, then b's first token.
    a.read(token('a2'));
    a.read(token('a3'));
    const b = handStream('b', log);
    b.read(token('b1'));
    expect(log).toEqual(['a:a1', 'b:b1']);

    await nextPhase();
    expect(log).toEqual(['a:a1', 'b:b1', 'a:a2', 'a:a3']);
  });

  it('ends a stream only after the parts deferred ahead of its end', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(token('a1'));
    a.read(token('a2') + vllmChunk({ content: '' }, 'stop') + 'data: [DONE]\n\n');
    a.end();
    expect(log).toEqual(['a:a1']);
    await a.stream.done;
    expect(log).toEqual(['a:a1', 'a:a2', 'a:end']);
  });

  it('decodes a generating stream’s later reads in the pass: an event cut across reads and a last event without its blank line come out in order', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(token('a1'));
    const a2 = token('a2');
    a.read(a2.slice(0, 9));
    a.read(a2.slice(9) + token('a3'));
    a.read(vllmChunk({ content: 'a4' }, 'stop').trimEnd());
    a.end();
    expect(log).toEqual(['a:a1']);
    await a.stream.done;
    expect(log).toEqual(['a:a1', 'a:a2', 'a:a3', 'a:a4', 'a:end']);
  });

  it('drops what was deferred when the stream is aborted before the pass', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(token('a1'));
    a.read(token('a2'));
    a.stream.abort(new Error('rejected'));
    await expect(a.stream.done).rejects.toThrow('rejected');
    await nextPhase();
    expect(log).toEqual(['a:a1']);
  });

  it('lets a request dispatched in the same phase be written before the pass, stepping aside one turn at most', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(token('a1'));
    a.read(token('a2'));
    // A new request whose write undici has put off to an immediate queued behind the pass.
    const b = handStream('b', log, { writeLater: true });
    await nextPhase();
    expect(log).toEqual(['a:a1']);
    // Written or not, the pass runs in the next turn: the yield is bounded.
    await nextPhase();
    expect(log).toEqual(['a:a1', 'a:a2']);

    // Once it is written, passes run without stepping aside.
    b.write();
    a.read(token('a3'));
    await nextPhase();
    expect(log).toEqual(['a:a1', 'a:a2', 'a:a3']);
    b.stream.abort(new Error('done'));
    await expect(b.stream.done).rejects.toThrow('done');
  });

  it('stops waiting for a request that ends before it is written', async () => {
    const log: string[] = [];
    const a = handStream('a', log);
    a.read(token('a1'));
    const b = handStream('b', log, { writeLater: true });
    b.stream.abort(new Error('client left'));
    await expect(b.stream.done).rejects.toThrow('client left');
    a.read(token('a2'));
    await nextPhase();
    expect(log).toEqual(['a:a1', 'a:a2']);
  });

  it('hands several deferred parts over inside one batchDelivery call, and a single one without it', async () => {
    const log: string[] = [];
    const batchDelivery = (deliver: () => void) => {
      log.push('batch{');
      deliver();
      log.push('}');
    };
    const a = handStream('a', log, { batchDelivery });
    a.read(token('a1'));
    a.read(token('a2') + token('a3'));
    a.read(token('a4'));
    await nextPhase();
    expect(log).toEqual(['a:a1', 'batch{', 'a:a2', 'a:a3', 'a:a4', '}']);

    a.read(token('a5'));
    await nextPhase();
    expect(log.slice(6)).toEqual(['a:a5']);
    a.stream.abort(new Error('done'));
    await expect(a.stream.done).rejects.toThrow('done');
  });

  it('fails only its own stream when batchDelivery throws', async () => {
    const log: string[] = [];
    const a = handStream('a', log, {
      batchDelivery: () => {
        throw new Error('consumer bug');
      },
    });
    const b = handStream('b', log);
    a.read(token('a1'));
    b.read(token('b1'));
    a.read(token('a2') + token('a3'));
    b.read(token('b2') + token('b3'));
    await expect(a.stream.done).rejects.toThrow('consumer bug');
    // b's turn may fall in the next pass when a's failure used up the pass's time slice (a slow
    // machine): every pass drains at least one stream, so a few phases are plenty.
    for (let i = 0; i < 5 && log.length < 4; i++) await nextPhase();
    expect(log).toEqual(['a:a1', 'b:b1', 'b:b2', 'b:b3']);
    b.stream.abort(new Error('done'));
    await expect(b.stream.done).rejects.toThrow('done');
  });
});
