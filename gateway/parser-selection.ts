import { createParser, withReasoning, type ParserFormat, type ToolCallParser } from '../parsers/index.ts';
import { isJsonObject } from '../core/json-object.ts';
import { resolveParserFormat } from '../parsers/format-names.ts';
import { withCodeFences } from '../parsers/with-code-fences.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { GatewayConfig } from './config.ts';

/**
 * `none`: pass-through. Every upstream text delta is forwarded as content, nothing is recognised
 * as a tool call, nothing is dispatched — the baseline that measures what parsing costs, and an
 * escape hatch for a model whose output a parser misreads.
 */
export const PASS_THROUGH = 'none';

export interface ParserChoice {
  format: ParserFormat | typeof PASS_THROUGH;
  /** Wrap in the `<think>…</think>` reasoning parser (never set with `tool_parser: "none"`; kept with `tool_choice: "none"`). */
  reasoning: boolean;
  /** The prompt opened the block: the output starts as reasoning (the rule's `startsInReasoning`). */
  startsInReasoning?: boolean;
}

/**
 * Formats whose markers are special tokens: vLLM strips those from the text unless the request
 * says `skip_special_tokens: false`, and the parser would then never see a call.
 */
const SPECIAL_TOKEN_FORMATS: ReadonlySet<ParserChoice['format']> = new Set(['mistral', 'deepseek-v3', 'deepseek-v31', 'harmony', 'functionary-v2', 'functionary-v3', 'python-tag']);

export function needsSpecialTokens(format: ParserChoice['format']): boolean {
  return SPECIAL_TOKEN_FORMATS.has(format);
}

// The rules' patterns compiled once per config (plain data after start-up), not per request, each
// on first use (the config's schema has already refused a pattern that does not compile).
const compiledRules = new WeakMap<GatewayConfig['toolParsers'], Array<RegExp | undefined>>();

function ruleMatches(rules: GatewayConfig['toolParsers'], index: number, model: string): boolean {
  let patterns = compiledRules.get(rules);
  if (!patterns) compiledRules.set(rules, (patterns = []));
  const pattern = (patterns[index] ??= new RegExp(rules[index]!.model, 'i'));
  return pattern.test(model);
}

/** Whether a `toolParsers` rule names `model`; otherwise it gets `defaultToolParser` (or its parent's rule, ModelParents). */
export function matchesRule(config: GatewayConfig, model: string): boolean {
  return config.toolParsers.some((_, i) => ruleMatches(config.toolParsers, i, model));
}

/**
 * The request's `tool_parser` wins; else the first `toolParsers` rule whose pattern matches the
 * model. `templateKwargs`: the request's `chat_template_kwargs`, for a rule's `thinkingKwarg`.
 */
export function chooseParser(config: GatewayConfig, model: string, override?: string, templateKwargs?: unknown): ParserChoice {
  if (override) return { format: resolveChoiceFormat(override, 'tool_parser'), reasoning: false };
  const rule = config.toolParsers.find((_, i) => ruleMatches(config.toolParsers, i, model));
  if (!rule) return { format: resolveChoiceFormat(config.defaultToolParser), reasoning: false };
  const format = resolveChoiceFormat(rule.format);
  // Pass-through means the text is not looked at, `<think>` blocks included.
  if (format === PASS_THROUGH) return { format, reasoning: false };
  const switchedOn = rule.thinkingKwarg !== undefined && isJsonObject(templateKwargs) && templateKwargs[rule.thinkingKwarg] === true;
  if (switchedOn) return { format, reasoning: true, startsInReasoning: true };
  return { format, reasoning: rule.reasoning, ...(rule.reasoning && rule.startsInReasoning === true ? { startsInReasoning: true } : {}) };
}

/** What a round's parser is built from, beside the format and the config. */
export interface RoundParserInputs {
  /** The round's call ids start with this (SessionOptions.callIdPrefix). */
  callIdPrefix: string;
  /** The request's `tools` (qwen3-coder reads parameter types from them). */
  requestTools: unknown[] | undefined;
  /** Tool name → the argument streamed as `line` pieces (lineFieldsOf). */
  lineFields: Record<string, string>;
  /**
   * Whether the request has a `python` tool (the gateway's or its own) for ```python fences in
   * the prose to call; without one a fence is the model's text, not a call to a tool nobody has.
   */
  pythonTool: boolean;
  /** Whether the request has a `plan` tool for an LLMCompiler plan to call (the same for plans). */
  planTool: boolean;
}

/** A fresh parser for one round: the model's format, plus ```python fences in its prose when enabled. */
export function buildParser(choice: ParserChoice, config: GatewayConfig, { callIdPrefix: prefix, requestTools, lineFields, pythonTool, planTool }: RoundParserInputs): ToolCallParser {
  // A format whose every call goes to one tool (a fence or <|python_tag|> to python, a plan to
  // plan) reads as the model's text when the request has no such tool, not as calls to refuse.
  const noToolForFormat = ((choice.format === 'code-fence' || choice.format === 'python-tag') && !pythonTool) || (choice.format === 'llmcompiler-plan' && !planTool);
  if (choice.format === PASS_THROUGH || noToolForFormat) {
    return withThinking(choice, passThroughParser());
  }
  const fence = { languages: config.codeFence.languages, bareFence: config.codeFence.bareFence, toolName: 'python' };
  if (choice.format === 'code-fence') {
    return withThinking(choice, createParser('code-fence', { ...fence, callIdPrefix: prefix }));
  }
  const lines = WITHOUT_LINE_FIELDS.has(choice.format) ? {} : { lineFields };
  const options = choice.format === 'qwen3-coder' ? { callIdPrefix: prefix, ...lines, toolDefinitions: requestTools } : { callIdPrefix: prefix, ...lines };
  let parser = createParser(choice.format, options as never);
  if (config.codeFence.enabled && pythonTool) parser = withCodeFences(parser, { ...fence, callIdPrefix: `${prefix}py` });
  return withThinking(choice, parser);
}

/** `parser` behind the `<think>` block's parser when the choice has one. */
function withThinking(choice: ParserChoice, parser: ToolCallParser): ToolCallParser {
  return choice.reasoning ? withReasoning(parser, { startsInReasoning: choice.startsInReasoning === true }) : parser;
}

/**
 * Formats whose arguments are not JSON strings to split (Python literals, plan steps, raw code
 * for one tool): they take no `lineFields`.
 */
const WITHOUT_LINE_FIELDS: ReadonlySet<ParserChoice['format']> = new Set(['pythonic', 'llmcompiler-plan', 'python-tag']);

const lineFieldsByTools = new WeakMap<ReadonlyMap<string, ToolPlugin>, Record<string, string>>();

/** The parsers' `lineFields` for a gateway's tools: each `line` tool's argument, once per tools map. */
export function lineFieldsOf(tools: ReadonlyMap<string, ToolPlugin>): Record<string, string> {
  let fields = lineFieldsByTools.get(tools);
  if (fields === undefined) {
    fields = {};
    for (const tool of tools.values()) if (tool.consumes === 'line' && tool.lineField !== undefined) fields[tool.name] = tool.lineField;
    lineFieldsByTools.set(tools, fields);
  }
  return fields;
}

function resolveChoiceFormat(name: string, param?: string): ParserChoice['format'] {
  return name.trim().toLowerCase() === PASS_THROUGH ? PASS_THROUGH : resolveParserFormat(name, param);
}

/** Each delta is one text event, unchanged: split-invariant trivially, and no code fences either. */
function passThroughParser(): ToolCallParser {
  return {
    push: (delta) => (delta === '' ? [] : [{ type: 'text', text: delta }]),
    end: () => [],
  };
}
