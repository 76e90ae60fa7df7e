import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ClientAbortedError } from '../../core/errors.ts';
import { closeUpstreamPools, streamChatCompletion } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk } from './fixtures/vllm-streams.ts';
import { pause, sseHeaders, startEndlessUpstream, startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
let upstream: TestUpstream | undefined;

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});
afterAll(closeUpstreamPools);

async function endlessUpstream(): Promise<TestUpstream> {
  upstream = await startEndlessUpstream();
  return upstream;
}

describe('streamChatCompletion abort propagation', () => {
  it('aborting the signal mid-stream closes the upstream socket and surfaces the reason', async () => {
    const server = await endlessUpstream();
    const controller = new AbortController();
    const reason = new ClientAbortedError();
    const seen = [];
    let caught: unknown;
    try {
      for await (const part of streamChatCompletion({ baseUrl: server.baseUrl, body, signal: controller.signal })) {
        seen.push(part);
        if (seen.length === 3) controller.abort(reason);
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toBe(reason);
    expect(seen).toEqual([START, { type: 'content', text: 't0 ' }, { type: 'content', text: 't1 ' }]);
    await server.requestSocketClosed(0);
  });

  it('an abort while waiting for the next chunk ends the iterator at once', async () => {
    upstream = await startTestUpstream((_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ content: 'only' }));
    });
    const controller = new AbortController();
    const iterator = streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: controller.signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual(START);
    expect((await iterator.next()).value).toEqual({ type: 'content', text: 'only' });
    const pending = iterator.next();
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBe(controller.signal.reason);
    expect((error as Error).name).toBe('AbortError');
    await upstream.requestSocketClosed(0);
  });

  it('breaking out of the for-await loop closes the upstream socket', async () => {
    const server = await endlessUpstream();
    for await (const part of streamChatCompletion({ baseUrl: server.baseUrl, body, signal: new AbortController().signal })) {
      if (part.type === 'content') break;
    }
    await server.requestSocketClosed(0);
  });

  it('an abort before the response headers cancels the request', async () => {
    upstream = await startTestUpstream(() => {});
    const controller = new AbortController();
    const iterator = streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: controller.signal })[Symbol.asyncIterator]();
    const pending = iterator.next();
    while (upstream.requests.length === 0) await pause(5);
    controller.abort(new ClientAbortedError());
    await expect(pending).rejects.toBeInstanceOf(ClientAbortedError);
    await upstream.requestSocketClosed(0);
  });

  it('an already aborted signal sends nothing upstream', async () => {
    upstream = await startTestUpstream(() => {});
    const reason = new ClientAbortedError();
    const stream = streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: AbortSignal.abort(reason) });
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toBe(reason);
    expect(upstream.connections()).toBe(0);
  });
});
