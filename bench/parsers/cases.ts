import type { ParserFormat } from '../../parsers/index.ts';
import { CALLS, CLOSING, modelJson, PREAMBLE, PYTHON_CODE, pythonLiteral, WEATHER_ARGS, type BenchCall } from './corpus.ts';

/**
 * How the obvious alternative finds the call it re-parses on each delta, the way vLLM's tool
 * parsers do: the text after the last `start` marker, cut at the first `end` marker, from its
 * first "{" or "[" on.
 */
export interface AlternativeFrame {
  start: readonly string[];
  end: readonly string[];
}

export interface BenchCase {
  /** Row label. */
  id: string;
  format: ParserFormat;
  /** The raw model output. For `openai-tool-calls`, only the content before the calls. */
  text: string;
  /** Wrap the parser in `withReasoning` (the `<think>` block of Qwen3 / DeepSeek-R1). */
  reasoning?: boolean;
  /** For the JSON formats: where the partial-JSON alternative looks. */
  alternative?: AlternativeFrame;
  /** `openai-tool-calls` only: the calls whose arguments stream as `delta.tool_calls`. */
  toolCalls?: readonly BenchCall[];
  /** Options for createParser. */
  options?: Record<string, unknown>;
}

const THINK = '<think>\nThe user wants weekly averages and a forecast. The CSV is small, so one script does it; the forecast is a separate tool, so both calls can go out together.\n</think>\n\n';

const json = (call: BenchCall, argsKey = 'arguments') => `{"name": ${JSON.stringify(call.name)}, "${argsKey}": ${modelJson(call.args)}}`;

/** DeepSeek's special tokens (full-width bars, U+2581). */
const DS = {
  callsBegin: '<｜tool▁calls▁begin｜>',
  callsEnd: '<｜tool▁calls▁end｜>',
  callBegin: '<｜tool▁call▁begin｜>',
  callEnd: '<｜tool▁call▁end｜>',
  sep: '<｜tool▁sep｜>',
};

const PLAN = [
  'Thought: I need the readings, the forecast, and a comparison of the two.',
  '1. python("import statistics\\nrows = [18.4, 17.9, 19.2, 21.0, 20.3, 16.8, 15.1]\\nprint(round(statistics.mean(rows), 2))")',
  `2. get_weather(${pythonLiteral(WEATHER_ARGS.city)}, ${pythonLiteral(WEATHER_ARGS.days)}, ${pythonLiteral(WEATHER_ARGS.fields)})`,
  'Thought: Compare the mean with the forecast, in °C.',
  '3. math("difference between $1 and the mean of ${2}", ["$1", "$2"])',
  '4. search("São Paulo climate normals June — médias climatológicas")',
  '5. join()<END_OF_PLAN>',
].join('\n');

export function buildCases(): BenchCase[] {
  const [python, weather] = CALLS as [BenchCall, BenchCall];
  const calls = [python, weather];
  const hermesCalls = calls.map((c) => `<tool_call>\n${json(c)}\n</tool_call>`).join('\n');
  return [
    {
      id: 'code-fence',
      format: 'code-fence',
      text: `${PREAMBLE}\`\`\`python\n${PYTHON_CODE}\`\`\`${CLOSING}`,
    },
    {
      id: 'hermes',
      format: 'hermes',
      text: `${PREAMBLE}${hermesCalls}${CLOSING}`,
      alternative: { start: ['<tool_call>'], end: ['</tool_call>'] },
    },
    {
      id: 'hermes + reasoning',
      format: 'hermes',
      reasoning: true,
      text: `${THINK}${PREAMBLE}${hermesCalls}`,
      alternative: { start: ['<tool_call>'], end: ['</tool_call>'] },
    },
    {
      id: 'mistral (v0.3 list)',
      format: 'mistral',
      text: `${PREAMBLE}[TOOL_CALLS] [${calls.map((c) => json(c)).join(', ')}]`,
      // vLLM's Mistral parser re-parses the whole list after [TOOL_CALLS].
      alternative: { start: ['[TOOL_CALLS]'], end: [] },
    },
    {
      id: 'mistral (v11 [ARGS])',
      format: 'mistral',
      text: `${PREAMBLE}${calls.map((c) => `[TOOL_CALLS]${c.name}[ARGS]${modelJson(c.args)}`).join('')}`,
      alternative: { start: ['[ARGS]'], end: ['[TOOL_CALLS]'] },
    },
    {
      id: 'llama3-json',
      format: 'llama3-json',
      text: `<|python_tag|>${calls.map((c) => json(c, 'parameters')).join('; ')}`,
      alternative: { start: ['<|python_tag|>', '; '], end: ['; {'] },
    },
    {
      id: 'functionary-v2',
      format: 'functionary-v2',
      text: `all\n<|content|>${PREAMBLE.trimEnd()}\n${calls.map((c) => `<|from|>assistant\n<|recipient|>${c.name}\n<|content|>${modelJson(c.args)}\n`).join('')}<|stop|>`,
      alternative: { start: ['<|content|>'], end: ['\n<|from|>', '<|stop|>'] },
    },
    {
      id: 'functionary-v3',
      format: 'functionary-v3',
      text: `all\n${PREAMBLE.trimEnd()}${calls.map((c) => `>>>${c.name}\n${modelJson(c.args)}`).join('')}`,
      alternative: { start: ['>>>'], end: [] },
    },
    {
      id: 'deepseek-v3',
      format: 'deepseek-v3',
      text: `${PREAMBLE}${DS.callsBegin}${calls.map((c) => `${DS.callBegin}function${DS.sep}${c.name}\n\`\`\`json\n${modelJson(c.args)}\n\`\`\`${DS.callEnd}`).join('\n')}${DS.callsEnd}${CLOSING}`,
      alternative: { start: [DS.sep], end: [`\n\`\`\`${DS.callEnd}`] },
    },
    {
      id: 'deepseek-v31',
      format: 'deepseek-v31',
      text: `${PREAMBLE}${DS.callsBegin}${calls.map((c) => `${DS.callBegin}${c.name}${DS.sep}${modelJson(c.args)}${DS.callEnd}`).join('')}${DS.callsEnd}${CLOSING}`,
      alternative: { start: [DS.sep], end: [DS.callEnd] },
    },
    {
      id: 'harmony',
      format: 'harmony',
      // gpt-oss sends one call per turn: reasoning, a preamble, then the call.
      text: `<|channel|>analysis<|message|>${THINK.slice(8, -11)}<|end|><|start|>assistant<|channel|>commentary<|message|>${PREAMBLE.trimEnd()}<|end|><|start|>assistant<|channel|>commentary to=functions.python <|constrain|>json<|message|>${modelJson(python.args)}<|call|>`,
      alternative: { start: ['<|message|>'], end: ['<|call|>'] },
    },
    {
      id: 'openai-tool-calls',
      format: 'openai-tool-calls',
      text: PREAMBLE.trimEnd(),
      toolCalls: calls,
      // Clients (and gateways) that re-parse the accumulated `arguments` string on each delta.
      alternative: { start: [], end: [] },
    },
    {
      id: 'python-tag',
      format: 'python-tag',
      text: `<|python_tag|>${PYTHON_CODE}<|eom_id|>`,
    },
    {
      id: 'pythonic',
      format: 'pythonic',
      text: `${PREAMBLE}[${calls.map((c) => `${c.name}(${Object.entries(c.args).map(([k, v]) => `${k}=${pythonLiteral(v)}`).join(', ')})`).join(', ')}]`,
    },
    {
      id: 'qwen3-coder',
      format: 'qwen3-coder',
      text: `${PREAMBLE}${calls
        .map((c) => `<tool_call>\n<function=${c.name}>\n${Object.entries(c.args).map(([k, v]) => `<parameter=${k}>\n${typeof v === 'string' ? v : JSON.stringify(v)}\n</parameter>\n`).join('')}</function>\n</tool_call>`)
        .join('\n')}`,
    },
    {
      id: 'llmcompiler-plan',
      format: 'llmcompiler-plan',
      text: `${PLAN}\n`,
    },
  ];
}
