import { InvalidRequestError } from '../core/errors.ts';
import { PARSER_FORMATS, type ParserFormat } from './index.ts';

/** vLLM's `--tool-call-parser` names that differ from ours beyond `_` vs `-`. */
const ALIASES: Record<string, ParserFormat> = {
  openai: 'harmony',
  'gpt-oss': 'harmony',
  qwen: 'hermes',
  'qwen2.5': 'hermes',
  qwen3: 'hermes',
  llama3: 'llama3-json',
  // vLLM registers its llama3_json class under this name too (Llama 4's JSON calls).
  'llama4-json': 'llama3-json',
  'llama4-pythonic': 'pythonic',
  // vLLM's XML reader of the same Qwen3-Coder format, and older vLLM's name for DeepSeek-V3.
  'qwen3-xml': 'qwen3-coder',
  deepseekv3: 'deepseek-v3',
  // SGLang's names (its `deepseekv3`, `llama3`, `gpt-oss` and `qwen` are above): `qwen25` is
  // its older name for the hermes-style `qwen` parser.
  deepseekv31: 'deepseek-v31',
  qwen25: 'hermes',
  markdown: 'code-fence',
  llmcompiler: 'llmcompiler-plan',
};

/**
 * Accepts our names and vLLM's (`llama3_json`, `deepseek_v3`, `qwen3_coder`, `openai`…); an unknown
 * one is an InvalidRequestError on `param`, the field that named it.
 */
export function resolveParserFormat(name: string, param = 'format'): ParserFormat {
  const normal = name.trim().toLowerCase().replaceAll('_', '-');
  if ((PARSER_FORMATS as string[]).includes(normal)) return normal as ParserFormat;
  const alias = ALIASES[normal];
  if (alias) return alias;
  throw new InvalidRequestError(`unknown tool-call format "${name}"; known: ${PARSER_FORMATS.join(', ')}`, param);
}
