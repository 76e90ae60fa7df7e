import { describe, expect, it } from 'vitest';
import { UpstreamContextLengthError, UpstreamProtocolError, UpstreamResponseError } from '../../core/errors.ts';
import { createChatCompletionPump, streamChatCompletion } from '../../llm-client/index.ts';
import { expectedPlainParts, MODEL, plainContentStream, START, vllmChunk } from './fixtures/vllm-streams.ts';
import { replicaState, runPump } from './replica-pump-run.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { collect, startSseUpstream } from './upstream-test-server.ts';

// What real servers send inside a 200 stream that the simulator never does: llama.cpp's `error:`
// line, vLLM's in-stream errors (each with code 400 up to 0.11), a body that ends without a
// finish_reason, a `[DONE]` with a trailing space.

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const track = trackedUpstreams();

async function streamOf(sse: string) {
  const upstream = await track(startSseUpstream(sse));
  return collect(streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal }));
}

/** A pump over [first, a healthy replica], its stream sent to `first`: what came out, and the replicas' states after. */
async function failingOver(first: string) {
  const odd = await track(startSseUpstream(first));
  const good = await track(startSseUpstream(plainContentStream));
  const pump = createChatCompletionPump({ baseUrl: [odd.baseUrl, good.baseUrl] });
  const run = await runPump(pump, { baseUrl: odd.baseUrl });
  return { ...run, requests: [odd.requests.length, good.requests.length], first: replicaState(pump, odd.baseUrl) };
}

/** llama.cpp's server_sent_event(sink, "error", …): a line whose field is `error`, then [DONE]. */
const llamaCppError = (error: Record<string, unknown>) => `error: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`;

/** vLLM's create_streaming_error_response with its defaults (every version to 0.11). */
const vllmStreamError = (message: string) => `data: ${JSON.stringify({ error: { message, type: 'BadRequestError', param: null, code: 400 } })}\n\ndata: [DONE]\n\n`;

describe('a stream from a real server that ends in an error or early', () => {
  it("reads llama.cpp's `error:` line after some text as the upstream's error, not as a whole answer", async () => {
    const { parts, error } = await streamOf(vllmChunk({ content: 'Hello' }) + llamaCppError({ code: 500, message: 'slot failed', type: 'server_error' }));
    expect(parts).toEqual([START, { type: 'content', text: 'Hello' }]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 500, message: 'slot failed' });
  });

  it("reads llama.cpp's context overflow, sent in its stream before any token, as context_length_exceeded with its numbers", async () => {
    const overflow = { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 5000, n_ctx: 4096 };
    const { parts, error } = await streamOf(llamaCppError(overflow));
    expect(parts).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamContextLengthError);
    expect(error).toMatchObject({ code: 'context_length_exceeded', status: 400, inputTokens: 5000, maxModelLen: 4096 });
  });

  it("reads vLLM's engine prompt-too-long, sent in its stream, as context_length_exceeded", async () => {
    const { error } = await streamOf(vllmStreamError('The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.'));
    expect(error).toBeInstanceOf(UpstreamContextLengthError);
    expect(error).toMatchObject({ inputTokens: 9000, maxModelLen: 8192 });
  });

  it("reads vLLM's dead engine, which it reports in the stream as a 400, as a 503", async () => {
    const { error } = await streamOf(vllmChunk({ role: 'assistant', content: '' }) + vllmStreamError('EngineCore encountered an issue. See stack trace (above) for the root cause.'));
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 503, message: expect.stringContaining('EngineCore encountered an issue') });
  });

  it('fails a body that ends after text without a finish_reason, [DONE] or not: the answer was cut short', async () => {
    for (const end of ['', 'data: [DONE]\n\n']) {
      const { parts, error } = await streamOf(vllmChunk({ content: 'Hello' }) + end);
      expect(parts).toEqual([START, { type: 'content', text: 'Hello' }]);
      expect(error).toBeInstanceOf(UpstreamProtocolError);
      expect((error as Error).message).toMatch(/without a finish_reason/);
    }
  });

  it('ends cleanly at a [DONE] with trailing white space', async () => {
    const { parts, error } = await streamOf(vllmChunk({ content: 'ok' }) + vllmChunk({}, 'stop') + 'data: [DONE] \n\n');
    expect(error).toBeUndefined();
    expect(parts.at(-1)).toEqual({ type: 'end' });
  });
});

describe("a replica's in-stream error before any token", () => {
  it('moves the stream to another replica without resting the first, as vLLM gives any such error code 400', async () => {
    const run = await failingOver(vllmChunk({ role: 'assistant', content: '' }) + vllmStreamError('Expected 2 output tokens, got 1'));
    expect(run.error).toBeUndefined();
    expect(run.parts).toEqual(expectedPlainParts);
    expect(run.requests).toEqual([1, 1]);
    expect(run.first).toMatchObject({ healthy: true });
  });

  it('moves on from a replica whose engine died, and rests it', async () => {
    const run = await failingOver(vllmChunk({ role: 'assistant', content: '' }) + vllmStreamError('EngineCore encountered an issue. See stack trace (above) for the root cause.'));
    expect(run.error).toBeUndefined();
    expect(run.parts).toEqual(expectedPlainParts);
    expect(run.first).toMatchObject({ healthy: false, failures: 1 });
  });
});

describe("a replica's answer cut short before any token (regression: failed the request, another replica never tried)", () => {
  it.each([
    ['ends after its role chunk, [DONE] or not', vllmChunk({ role: 'assistant', content: '' })],
    ['ends at [DONE] with no finish_reason', vllmChunk({ role: 'assistant', content: '' }) + 'data: [DONE]\n\n'],
    ['ends with no chunk at all', ''],
  ])('moves the stream to another replica, without resting the first, when it %s', async (_what, sse) => {
    const run = await failingOver(sse);
    expect(run.error).toBeUndefined();
    expect(run.parts).toEqual(expectedPlainParts);
    expect(run.requests).toEqual([1, 1]);
    expect(run.first).toMatchObject({ healthy: true, failures: 0 });
  });

  it('still fails a stream cut short after its first token: the client has that token', async () => {
    const run = await failingOver(vllmChunk({ content: 'Hel' }));
    expect(run.error).toBeInstanceOf(UpstreamProtocolError);
    expect(run.requests).toEqual([1, 0]);
  });
});

// Regression: read as `stop`, an answer the engine dropped passed for a whole one, and before any
// token it counted as the replica's success, so no other replica was tried. `error` is vLLM's engine
// failing a request for a retryable internal reason (a failed KV load): FINISH_REASON_STRINGS in
// vllm/v1/engine/__init__.py ("stop", "length", "abort", "error", "repetition"), passed on as is.
describe.each([
  ['abort', 'vLLM, SGLang: the engine dropped the request', 'aborted'],
  ['error', 'vLLM: the engine failed the request, retryable', 'failed'],
])('finish_reason "%s" (%s)', (reason, _why, verb) => {
  const ended = (before: string) => before + vllmChunk({}, reason) + 'data: [DONE]\n\n';

  it('fails the stream after text: the answer was cut short, not finished', async () => {
    const { parts, error } = await streamOf(ended(vllmChunk({ content: 'Hello' })));
    expect(parts).toEqual([START, { type: 'content', text: 'Hello' }]);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 500, inStream: true, message: `the upstream ${verb} the request before its answer was finished (finish_reason "${reason}")` });
  });

  it('before any token, moves the stream to another replica without resting the first', async () => {
    const run = await failingOver(ended(vllmChunk({ role: 'assistant', content: '' })));
    expect(run.error).toBeUndefined();
    expect(run.parts).toEqual(expectedPlainParts);
    expect(run.requests).toEqual([1, 1]);
    expect(run.first).toMatchObject({ healthy: true, failures: 0 });
  });
});

it('finish_reason "repetition" (vLLM) is a finish like "length": the engine stopped a looping answer, which the client has whole', async () => {
  const { parts, error } = await streamOf(vllmChunk({ content: 'Hello' }) + vllmChunk({}, 'repetition') + 'data: [DONE]\n\n');
  expect(error).toBeUndefined();
  expect(parts).toContainEqual({ type: 'finish', reason: 'repetition' });
});
