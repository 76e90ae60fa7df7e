import type { ToolCallParserName } from './sim-server.ts';
import type { EngineLoop } from './engine-loop.ts';
import type { ScenarioSet } from './scenario-set.ts';
import type { ReasoningParserName } from './reasoning-split.ts';

/** What every route of one simulator server shares. */
export interface SimContext {
  engine: EngineLoop;
  scenarios: ScenarioSet;
  /** The served model name (vLLM's --served-model-name). */
  modelName: string;
  /** The model as loaded (vLLM's `--model`), which /v1/models reports as the served model's `root`. */
  modelPath: string;
  /** vLLM's `--enable-auto-tool-choice --tool-call-parser <name>`: replies' tool calls leave as `tool_calls`. */
  toolCallParser?: ToolCallParserName;
  /** vLLM's `--reasoning-parser <name>`: a reply's `<think>` block leaves as `reasoning_content` (reasoning-split.ts). */
  reasoningParser?: ReasoningParserName;
  /** vLLM's `--enable-prompt-tokens-details`: the final usage says how many prompt tokens the prefix cache held (`prompt_tokens_details.cached_tokens`). */
  promptTokensDetails?: boolean;
  /** vLLM's --api-key: requests under /v1 must carry `Authorization: Bearer <key>`. */
  apiKey?: string;
}
