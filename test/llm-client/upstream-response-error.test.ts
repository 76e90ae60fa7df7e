import { describe, expect, it } from 'vitest';
import { UpstreamContextLengthError, UpstreamMaxTokensTooLargeError, UpstreamResponseError } from '../../core/errors.ts';
import { contextLimits, inStreamUpstreamError, upstreamResponseError } from '../../llm-client/upstream-response-error.ts';
import { contextLengthErrorBody } from './fixtures/vllm-streams.ts';

const read = (status: number, body: unknown) => upstreamResponseError(status, [Buffer.from(JSON.stringify(body))]);
/** vLLM >= 0.9's error body. */
const vllm = (message: string, param: string | null = null) => ({ error: { message, type: 'BadRequestError', param, code: 400 } });

describe("an upstream's context overflow", () => {
  it.each([
    ['vLLM >= 0.9', "This model's maximum context length is 32768 tokens. However, your request has 108010 input tokens. Please reduce the length of the input messages.", 32768, 108010],
    ['older vLLM, no max_tokens', "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the messages, Please reduce the length of the messages.", 4096, 5000],
    ['older vLLM, a prompt over the context beside max_tokens', "This model's maximum context length is 4096 tokens. However, you requested 5016 tokens (5000 in the messages, 16 in the completion). Please reduce the length of the messages or completion.", 4096, 5000],
    ['OpenAI', "This model's maximum context length is 128000 tokens. However, your messages resulted in 130125 tokens. Please reduce the length of the messages.", 128000, 130125],
    ["vLLM's engine (V1)", 'The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.', 4096, 5000],
    ['SGLang', "The input (5000 tokens) is longer than the model's context length (4096 tokens).", 4096, 5000],
  ])("is OpenAI's context_length_exceeded on messages when the prompt alone does not fit (%s)", (_who, message, maxModelLen, inputTokens) => {
    const error = read(400, vllm(message));
    expect(error).toBeInstanceOf(UpstreamContextLengthError);
    expect(error).toMatchObject({ status: 400, message, param: 'messages', code: 'context_length_exceeded', maxModelLen, inputTokens });
  });

  it("is context_length_exceeded in llama.cpp's words, its numbers beside the message", () => {
    const message = 'the request exceeds the available context size, try increasing it';
    const error = read(400, { error: { code: 400, message, type: 'exceed_context_size_error', n_prompt_tokens: 5000, n_ctx: 4096 } });
    expect(error).toBeInstanceOf(UpstreamContextLengthError);
    expect(error).toMatchObject({ status: 400, message, code: 'context_length_exceeded', maxModelLen: 4096, inputTokens: 5000 });
  });

  it('reads the same in an older vLLM body, its fields at the top level', () => {
    const message = "This model's maximum context length is 2048 tokens. However, your request has 3000 input tokens. Please reduce the length of the input messages.";
    const error = read(400, { object: 'error', message, type: 'BadRequestError', param: null, code: 400 });
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  it.each([
    ['vLLM >= 0.9', "'max_tokens' or 'max_completion_tokens' is too large: 32272. This model's maximum context length is 32768 tokens and your request has 686 input tokens (32272 > 32768 - 686).", 32082],
    ["vLLM >= 0.9, with the ' None' some builds append", "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None", 1318],
    ['older vLLM', contextLengthErrorBody.error.message, 96],
  ])('is a too-large max_tokens, not a context overflow, when the prompt fits (%s): it says how many tokens would fit', (_who, message, tokensThatFit) => {
    const error = read(400, vllm(message));
    expect(error).toBeInstanceOf(UpstreamMaxTokensTooLargeError);
    expect(error).toMatchObject({ status: 400, message, param: 'max_tokens', code: 'upstream_response_error', tokensThatFit });
  });

  // SGLang words a prompt plus max_tokens over its context its own way, and refuses a sum that
  // reaches the context (>=) where vLLM refuses one past it: read as vLLM's wording it was a plain
  // 400, and the gateway's later round was not sent again with a max_tokens that fits.
  it("is a too-large max_tokens in SGLang's words, as a 400 body and inside its stream, with a max_tokens SGLang takes", () => {
    const message =
      "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 4100 tokens: 2000 tokens from the input messages and 2100 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.";
    const body = { object: 'error', message, type: 'BadRequestError', param: null, code: 400 };
    for (const error of [read(400, body), inStreamUpstreamError({ error: body }, JSON.stringify({ error: body }))]) {
      expect(error).toBeInstanceOf(UpstreamMaxTokensTooLargeError);
      expect(error).toMatchObject({ status: 400, message, param: 'max_tokens', inputTokens: 2000 });
      // SGLang refuses input + max_tokens >= 4096: 2096 is refused again, 2095 is taken.
      expect((error as UpstreamMaxTokensTooLargeError).tokensThatFit).toBe(2095);
    }
    // A prompt that leaves no room at all under SGLang's rule is the context's overflow.
    const full = message.replace('2000 tokens from', '4095 tokens from');
    expect(read(400, { ...body, message: full })).toBeInstanceOf(UpstreamContextLengthError);
  });

  it("keeps the param the upstream named for a too-large max_tokens", () => {
    const message = "'max_tokens' or 'max_completion_tokens' is too large: 5000. This model's maximum context length is 4096 tokens and your request has 20 input tokens (5000 > 4096 - 20).";
    expect(read(400, vllm(message, 'max_completion_tokens'))).toMatchObject({ param: 'max_completion_tokens' });
  });

  it('leaves other statuses and other 400s as they are', () => {
    const overflow = "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.";
    const asServerError = read(500, vllm(overflow));
    expect(asServerError).not.toBeInstanceOf(UpstreamContextLengthError);
    expect(asServerError).toMatchObject({ status: 500, code: 'upstream_response_error', param: null });
    const other = read(400, vllm('temperature must be non-negative, got -1.0.', 'temperature'));
    expect(other.constructor).toBe(UpstreamResponseError);
    expect(other).toMatchObject({ code: 'upstream_response_error', param: 'temperature' });
    // A context is named but no prompt size: nothing to decide on.
    expect(contextLimits("This model's maximum context length is 4096 tokens.")).toBeUndefined();
  });
});
