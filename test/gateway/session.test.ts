import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeUpstreamPools, createChatCompletionPump } from '../../llm-client/index.ts';
import { chatRequestSchema } from '../../gateway/chat-request-schema.ts';
import { runSession, type SessionEvent, type SessionOptions } from '../../gateway/session.ts';
import { Timeline } from '../../gateway/timeline.ts';
import type { ToolCallParser } from '../../parsers/parser-events.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, plainContentStream, plainContentText, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { startSseUpstream, type TestUpstream } from '../llm-client/upstream-test-server.ts';

let upstream: TestUpstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});
afterAll(closeUpstreamPools);

const passThrough = (): ToolCallParser => ({ push: (delta) => (delta === '' ? [] : [{ type: 'text', text: delta }]), end: () => [] });

function options(baseUrl: string, createParser: SessionOptions['createParser'], events: SessionEvent[] = []): SessionOptions {
  return {
    request: chatRequestSchema.parse({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    upstream: { pump: createChatCompletionPump({ baseUrl }, { requestsValidated: true }) },
    tools: new Map(),
    createParser,
    partialExecution: true,
    maxRounds: 4,
    onToolReject: 'reprompt',
    timeline: new Timeline('req-test'),
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
  };
}

describe('runSession: a round against a real upstream', () => {
  it("hands the request to undici before it builds the round's parser, and answers with the upstream's text", async () => {
    upstream = await startSseUpstream(plainContentStream);
    const built: number[] = [];
    const events: SessionEvent[] = [];
    const session = runSession(
      options(upstream.baseUrl, (round) => {
        built.push(round);
        return passThrough();
      }, events),
    );
    // Synchronously, runSession has dispatched the request and not yet built the parser.
    expect(built).toEqual([]);
    const result = await session;
    expect(built).toEqual([1]);
    expect(result.content).toBe(plainContentText);
    expect(result.stopReason).toBe('answer');
    expect(events.filter((e) => e.type === 'content').map((e) => (e as { text: string }).text).join('')).toBe(plainContentText);
    expect(upstream.requests).toHaveLength(1);
  });

  it('fails with what building the parser threw, and the next request to the upstream still works', async () => {
    upstream = await startSseUpstream(plainContentStream);
    const baseUrl = upstream.baseUrl;
    // A kept-alive socket first, so the failing round's request is written before its parser is built.
    await runSession(options(baseUrl, passThrough));
    const broken = new Error('no parser for this round');
    await expect(
      runSession(
        options(baseUrl, () => {
          throw broken;
        }),
      ),
    ).rejects.toBe(broken);
    const after = await runSession(options(baseUrl, passThrough));
    expect(after.content).toBe(plainContentText);
  });

  // vLLM's `abort` is no answer at all: an error (chat-chunk-decoder.ts, real-server-stream-ends.test.ts).
  it("passes the upstream's content_filter on as the finish reason, and reads its other reasons (TGI's eos_token) as stop", async () => {
    for (const [upstreamReason, expected] of [['content_filter', 'content_filter'], ['eos_token', 'stop']] as const) {
      upstream = await startSseUpstream([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'I cannot' }), vllmChunk({ content: '' }, upstreamReason), DONE].join(''));
      const result = await runSession(options(upstream.baseUrl, passThrough));
      expect(result.finishReason).toBe(expected);
      await upstream.close();
      upstream = undefined;
    }
  });

  it('stops the tools its round started when the round fails after the decode (a parser whose end throws)', async () => {
    upstream = await startSseUpstream(plainContentStream);
    const aborted: string[] = [];
    const slow: ToolPlugin = {
      name: 'slow',
      description: 'answers when aborted',
      parameters: { type: 'object' },
      consumes: 'call',
      start: () => ({ piece: () => undefined, end: () => new Promise(() => {}), abort: (reason) => aborted.push(reason) }),
    };
    const broken = new Error('parser bug at end');
    let started = false;
    const parser = (): ToolCallParser => ({
      push: () => {
        if (started) return [];
        started = true;
        return [{ type: 'call-start', callId: 'c1', name: 'slow' }];
      },
      end: () => {
        throw broken;
      },
    });
    await expect(runSession({ ...options(upstream.baseUrl, parser), tools: new Map([['slow', slow]]) })).rejects.toBe(broken);
    expect(aborted).toHaveLength(1);
  });
});
