import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { resolveParserFormat } from '../../parsers/format-names.ts';

describe('resolveParserFormat', () => {
  it("takes vLLM's --tool-call-parser names as well as ours", () => {
    expect(
      ['hermes', 'llama3_json', 'llama4_json', 'qwen3_coder', 'qwen3_xml', 'deepseek_v3', 'deepseekv3', 'openai', 'Mistral', ' pythonic '].map((n) => resolveParserFormat(n)),
    ).toEqual(['hermes', 'llama3-json', 'llama3-json', 'qwen3-coder', 'qwen3-coder', 'deepseek-v3', 'deepseek-v3', 'harmony', 'mistral', 'pythonic']);
  });

  // A deployment moved from SGLang keeps its --tool-call-parser name: `deepseekv31` and `qwen25`
  // were refused as unknown formats (`deepseekv3`, `llama3`, `gpt-oss` were already taken).
  it("takes SGLang's --tool-call-parser names for the formats we have", () => {
    expect(['deepseekv3', 'deepseekv31', 'qwen25', 'qwen', 'llama3', 'gpt-oss', 'pythonic', 'mistral', 'qwen3_coder'].map((n) => resolveParserFormat(n))).toEqual([
      'deepseek-v3',
      'deepseek-v31',
      'hermes',
      'hermes',
      'llama3-json',
      'harmony',
      'pythonic',
      'mistral',
      'qwen3-coder',
    ]);
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
