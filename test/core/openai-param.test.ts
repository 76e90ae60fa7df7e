import { describe, expect, it } from 'vitest';
import { openAiParam } from '../../core/openai-param.ts';
import { upstreamErrorParam } from '../../llm-client/upstream-error-message.ts';

describe("a field's path as OpenAI's errors name it", () => {
  it('puts an array index in brackets, as OpenAI\'s 400s do (messages.[1].content)', () => {
    expect(openAiParam(['messages', 1, 'content'])).toBe('messages.[1].content');
    expect(openAiParam(['tools', 0, 'function', 'parameters'])).toBe('tools.[0].function.parameters');
    expect(openAiParam(['temperature'])).toBe('temperature');
  });

  it("leaves a record's key a key, digits or not", () => {
    expect(openAiParam(['logit_bias', '50256'])).toBe('logit_bias.50256');
  });

  it("names an upstream's FastAPI location the same way, whether a list or vLLM's dotted param", () => {
    expect(upstreamErrorParam({ detail: [{ loc: ['body', 'messages', 0, 'role'], msg: 'Input should be …' }] })).toBe('messages.[0].role');
    expect(upstreamErrorParam({ error: { message: 'bad', type: 'BadRequestError', param: 'body.messages.0.role', code: 400 } })).toBe('messages.[0].role');
    expect(upstreamErrorParam({ error: { message: 'bad', type: 'BadRequestError', param: 'body.seed', code: 400 } })).toBe('seed');
  });
});
