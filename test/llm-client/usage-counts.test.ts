import { describe, expect, it } from 'vitest';
import { NO_USAGE, sumUsage } from '../../llm-client/usage-counts.ts';

describe('sumUsage', () => {
  it('adds the counts and the details, a detail only one side has counting as that side reported it', () => {
    const round1 = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 64 } };
    const round2 = { prompt_tokens: 150, completion_tokens: 10, total_tokens: 160, prompt_tokens_details: { cached_tokens: 112 }, completion_tokens_details: { reasoning_tokens: 4 } };
    expect(sumUsage(sumUsage(NO_USAGE, round1), round2)).toEqual({
      prompt_tokens: 250,
      completion_tokens: 30,
      total_tokens: 280,
      prompt_tokens_details: { cached_tokens: 176 },
      completion_tokens_details: { reasoning_tokens: 4 },
    });
    // No details anywhere: none in the sum, as OpenAI's clients expect of a server that sends none.
    expect(sumUsage(NO_USAGE, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });
});
