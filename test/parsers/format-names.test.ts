import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { resolveParserFormat } from '../../parsers/format-names.ts';

describe('resolveParserFormat', () => {
  it("takes vLLM's --tool-call-parser names as well as ours", () => {
    expect(
      ['hermes', 'llama3_json', 'llama4_json', 'qwen3_coder', 'qwen3_xml', 'deepseek_v3', 'deepseekv3', 'openai', 'Mistral', ' pythonic '].map((n) => resolveParserFormat(n)),
    ).toEqual(['hermes', 'llama3-json', 'llama3-json', 'qwen3-coder', 'qwen3-coder', 'deepseek-v3', 'deepseek-v3', 'harmony', 'mistral', 'pythonic']);
  });

  it('refuses an unknown one on the field that named it, listing the known ones', () => {
    let thrown: unknown;
    try {
      resolveParserFormat('granite_xyz', 'tool_parser');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidRequestError);
    expect(thrown).toMatchObject({ param: 'tool_parser', message: expect.stringMatching(/^unknown tool-call format "granite_xyz"; known: .*hermes/) });
  });
});
