import { describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';
import { chooseParser } from '../../gateway/parser-selection.ts';

const config = gatewayConfigSchema.parse({ upstream: { baseUrl: 'http://127.0.0.1:1/v1' } });

describe('the default tool-parser rules for thinking models', () => {
  it.each([
    // The chat template opens <think> in the prompt: the output starts inside the block.
    ['deepseek-ai/DeepSeek-R1', { format: 'deepseek-v3', reasoning: true, startsInReasoning: true }],
    ['deepseek-ai/DeepSeek-R1-Distill-Qwen-7B', { format: 'deepseek-v3', reasoning: true, startsInReasoning: true }],
    ['deepseek-ai/DeepSeek-R1-0528-Qwen3-8B', { format: 'deepseek-v3', reasoning: true, startsInReasoning: true }],
    ['Qwen/QwQ-32B', { format: 'hermes', reasoning: true, startsInReasoning: true }],
    ['Qwen/Qwen3-30B-A3B-Thinking-2507', { format: 'hermes', reasoning: true, startsInReasoning: true }],
    // Hybrid Qwen3 writes its own <think> (or none, with thinking off).
    ['Qwen/Qwen3-8B', { format: 'hermes', reasoning: true }],
    ['Qwen/Qwen3-Coder-30B-A3B-Instruct', { format: 'qwen3-coder', reasoning: false }],
    ['Qwen/Qwen2.5-7B-Instruct', { format: 'hermes', reasoning: false }],
    ['deepseek-ai/DeepSeek-V3.1', { format: 'deepseek-v31', reasoning: false }],
  ])('%s', (model, choice) => {
    expect(chooseParser(config, model)).toEqual(choice);
  });

  it("reads DeepSeek-V3.1 as starting in reasoning when the request switches its thinking on (chat_template_kwargs.thinking), as vLLM's deepseek_v3 parser does", () => {
    expect(chooseParser(config, 'deepseek-ai/DeepSeek-V3.1', undefined, { thinking: true })).toEqual({ format: 'deepseek-v31', reasoning: true, startsInReasoning: true });
    for (const kwargs of [undefined, {}, { thinking: false }, { thinking: 'true' }, { enable_thinking: true }]) {
      expect(chooseParser(config, 'deepseek-ai/DeepSeek-V3.1', undefined, kwargs), JSON.stringify(kwargs)).toEqual({ format: 'deepseek-v31', reasoning: false });
    }
    // A model whose rule has no such switch is not changed by it.
    expect(chooseParser(config, 'Qwen/Qwen2.5-7B-Instruct', undefined, { thinking: true })).toEqual({ format: 'hermes', reasoning: false });
  });

  it('refuses startsInReasoning on a rule without reasoning', () => {
    const result = gatewayConfigSchema.safeParse({ upstream: { baseUrl: 'http://127.0.0.1:1/v1' }, toolParsers: [{ model: 'x', format: 'hermes', startsInReasoning: true }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['toolParsers', 0, 'startsInReasoning'], message: 'startsInReasoning is for a rule with reasoning: true (the <think> block its prompt opens)' });
  });
});
