import { describe, expect, it } from 'vitest';
import { UpstreamContextLengthError, UpstreamMaxTokensTooLargeError, UpstreamResponseError } from '../../core/errors.ts';
import type { ChatMessage } from '../../gateway/chat-request-schema.ts';
import { RoundResend, type RoundResendOptions } from '../../gateway/round-resend.ts';
import { Timeline } from '../../gateway/timeline.ts';

const tooLong = () => new UpstreamContextLengthError("This model's maximum context length is 4096 tokens…", { maxModelLen: 4096, inputTokens: 4200 });
// 3,000 tokens of prompt leave 1,096 of the 4,096 for the reply.
const maxTooLarge = () => new UpstreamMaxTokensTooLargeError("'max_tokens' is too large: 2000…", 'max_tokens', { maxModelLen: 4096, inputTokens: 3000 });
const fitted: ChatMessage[] = [{ role: 'user', content: 'cut to fit' }];

function resend(options: Partial<RoundResendOptions> = {}) {
  const timeline = new Timeline('req_test');
  const r = new RoundResend({ round: 2, maxTokens: 2000, timeline, ...options });
  return { r, errors: () => timeline.events.filter((e) => e.type === 'error').map((e) => e.detail) };
}

describe('RoundResend', () => {
  it('sends a later round again with its tool results cut to fit, at most twice', () => {
    const { r, errors } = resend({ fitToContext: () => ({ messages: fitted, cap: 512 }) });
    expect(r.after(tooLong(), true, 2000)).toEqual({ messages: fitted });
    expect(r.after(tooLong(), true, 2000)).toEqual({ messages: fitted });
    expect(r.after(tooLong(), true, 2000)).toBeUndefined();
    expect(errors()).toEqual([
      expect.stringContaining("the prompt, 4200 tokens, left the reply too little of the context of 4096: this request's tool results were cut to 512 bytes each"),
      expect.stringContaining('cut to 512 bytes each'),
    ]);
  });

  it('asks once for the max_tokens the context leaves where the results cannot be cut', () => {
    const { r, errors } = resend({ fitToContext: () => undefined });
    expect(r.after(maxTooLarge(), true, 2000)).toEqual({ maxTokens: 1096 });
    expect(r.after(maxTooLarge(), true, 1096)).toBeUndefined();
    expect(errors()).toEqual(['the upstream refused max_tokens 2000, more than the prompt leaves of the context: sent again with 1096']);
  });

  it('cuts the results before it shrinks max_tokens, which would leave the reply little room', () => {
    const { r } = resend({ fitToContext: () => ({ messages: fitted, cap: 100 }) });
    expect(r.after(maxTooLarge(), true, 2000)).toEqual({ messages: fitted });
  });

  it("leaves round 1's refusal, a decode already under way and other errors to the client", () => {
    const fit = { fitToContext: () => ({ messages: fitted, cap: 512 }) };
    expect(resend({ ...fit, round: 1 }).r.after(tooLong(), true, 2000)).toBeUndefined();
    expect(resend({ ...fit, round: 1 }).r.after(maxTooLarge(), true, 2000)).toBeUndefined();
    expect(resend(fit).r.after(tooLong(), false, 2000)).toBeUndefined();
    expect(resend(fit).r.after(new UpstreamResponseError(400, 'temperature must be ≥ 0', 'temperature'), true, 2000)).toBeUndefined();
    // No budget to shrink, or a context that leaves no less than it: nothing to ask for.
    expect(resend({ maxTokens: undefined }).r.after(maxTooLarge(), true, undefined)).toBeUndefined();
    expect(resend({ maxTokens: 1000 }).r.after(maxTooLarge(), true, 1000)).toBeUndefined();
  });
});
