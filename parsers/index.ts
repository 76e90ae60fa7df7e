import { InvalidRequestError } from '../core/errors.ts';
import { createCodeFenceParser, type CodeFenceParserOptions } from './code-fence-parser.ts';
import { createLlmCompilerPlanParser, type LlmCompilerPlanParserOptions } from './formats/llmcompiler-plan-parser.ts';
import { createPythonTagParser, type PythonTagParserOptions } from './formats/python-tag-parser.ts';
import { createPythonicParser, type PythonicParserOptions } from './formats/pythonic-parser.ts';
import { createQwen3CoderParser, type Qwen3CoderParserOptions } from './formats/qwen3-coder-parser.ts';
import { createDeepSeekParser, type DeepSeekParserOptions } from './formats/deepseek-parser.ts';
import { createFunctionaryV2Parser, type FunctionaryV2ParserOptions } from './formats/functionary-v2-parser.ts';
import { createFunctionaryV3Parser, type FunctionaryV3ParserOptions } from './formats/functionary-v3-parser.ts';
import { createHarmonyParser, type HarmonyParserOptions } from './formats/harmony-parser.ts';
import { createHermesParser, type HermesParserOptions } from './formats/hermes-parser.ts';
import { createLlama3JsonParser, type Llama3JsonParserOptions } from './formats/llama3-json-parser.ts';
import { createMistralParser, type MistralParserOptions } from './formats/mistral-parser.ts';
import { createOpenAIToolCallsParser, type OpenAIToolCallsOptions } from './formats/openai-tool-calls.ts';
import type { ToolCallParser } from './parser-events.ts';

/** Every output format the gateway can parse; adding a format is one line here. */
const parserFactories = {
  'code-fence': (options?: CodeFenceParserOptions) => createCodeFenceParser(options),
  pythonic: (options?: PythonicParserOptions) => createPythonicParser(options),
  'python-tag': (options?: PythonTagParserOptions) => createPythonTagParser(options),
  'qwen3-coder': (options?: Qwen3CoderParserOptions) => createQwen3CoderParser(options),
  'llmcompiler-plan': (options?: LlmCompilerPlanParserOptions) => createLlmCompilerPlanParser(options),
  hermes: (options?: HermesParserOptions) => createHermesParser(options),
  mistral: (options?: MistralParserOptions) => createMistralParser(options),
  'llama3-json': (options?: Llama3JsonParserOptions) => createLlama3JsonParser(options),
  'functionary-v2': (options?: FunctionaryV2ParserOptions) => createFunctionaryV2Parser(options),
  'functionary-v3': (options?: FunctionaryV3ParserOptions) => createFunctionaryV3Parser(options),
  'deepseek-v3': (options?: DeepSeekParserOptions) => createDeepSeekParser('v3', options),
  'deepseek-v31': (options?: DeepSeekParserOptions) => createDeepSeekParser('v31', options),
  harmony: (options?: HarmonyParserOptions) => createHarmonyParser(options),
  'openai-tool-calls': (options?: OpenAIToolCallsOptions) => createOpenAIToolCallsParser(options),
} satisfies Record<string, (options?: never) => ToolCallParser>;

export type ParserFormat = keyof typeof parserFactories;
export type ParserOptions<F extends ParserFormat> = Parameters<(typeof parserFactories)[F]>[0];

export const PARSER_FORMATS = Object.keys(parserFactories) as ParserFormat[];

/** A fresh parser (one per generation) for `format`. */
export function createParser<F extends ParserFormat>(format: F, options?: ParserOptions<F>): ToolCallParser {
  // Formats often come from config files, where the type system has no say.
  if (!Object.hasOwn(parserFactories, format)) {
    throw new InvalidRequestError(`unknown parser format "${String(format)}"; known: ${PARSER_FORMATS.join(', ')}`, 'format');
  }
  const factory: (options?: ParserOptions<F>) => ToolCallParser = parserFactories[format];
  return factory(options);
}

export type { ParserEvent, Piece, ToolCallParser } from './parser-events.ts';
export { coalesceText } from './parser-events.ts';
export type { CodeFenceParserOptions } from './code-fence-parser.ts';
export type { PythonicParserOptions, PythonTagParserOptions, Qwen3CoderParserOptions, LlmCompilerPlanParserOptions };
export { planStepDependencies, type PlanStep } from './formats/llmcompiler-plan-parser.ts';
export { withReasoning, type ReasoningOptions } from './formats/reasoning-wrapper.ts';
export type { HermesParserOptions, MistralParserOptions, Llama3JsonParserOptions, FunctionaryV2ParserOptions, FunctionaryV3ParserOptions, DeepSeekParserOptions, HarmonyParserOptions, OpenAIToolCallsOptions };
export { createOpenAIToolCallsParser, type OpenAIToolCallsParser, type ToolCallDelta } from './formats/openai-tool-calls.ts';
