import { readFileSync } from 'node:fs';

/** One entry of ../shared/data/toolcall-vectors.sample.json (see its README). */
export interface ToolcallVector {
  id: string;
  format: string;
  raw_text: string;
  expected?: Array<{ name: string; arguments: Record<string, unknown> }>;
  expected_error?: string;
  expected_content?: string | null;
  stream_chunks?: string[] | 'per-character';
  mode?: 'streaming' | 'nonstreaming';
  tools?: string[];
  tools_schema?: Record<string, Record<string, string>>;
}

/** The repo and shared/ sit side by side (here and in CI). */
export const VECTORS_PATH = new URL('../../../shared/data/toolcall-vectors.sample.json', import.meta.url);

export function loadVectors(): ToolcallVector[] {
  return JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as ToolcallVector[];
}

/** Vector family → the `tool_parser` a client names for it (ours or vLLM's spelling). */
export const VECTOR_TOOL_PARSER: Record<string, string> = {
  hermes: 'hermes',
  mistral: 'mistral',
  llama3_json: 'llama3_json',
  pythonic: 'pythonic',
  'sglang:pythonic': 'pythonic',
  qwen3_coder: 'qwen3_coder',
  deepseek_v3: 'deepseek_v3',
  deepseek_v31: 'deepseek_v31',
  'conveyor:functionary_v2': 'functionary-v2',
  'conveyor:python_code_block': 'code-fence',
  'llmcompiler:plan': 'llmcompiler-plan',
  'openai (gpt-oss harmony)': 'openai',
};

/** OpenAI `tools` for a vector whose types come from a schema (qwen3_coder). */
export function vectorTools(v: ToolcallVector): unknown[] | undefined {
  if (!v.tools_schema) return undefined;
  return Object.entries(v.tools_schema).map(([name, params]) => ({
    type: 'function',
    function: { name, parameters: { type: 'object', properties: Object.fromEntries(Object.entries(params).map(([p, type]) => [p, { type }])) } },
  }));
}
