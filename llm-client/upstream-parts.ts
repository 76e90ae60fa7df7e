/**
 * The typed parts of one upstream chat-completion stream. Everything downstream of the client
 * (parser, dispatcher, client writer, timeline) consumes these, never raw SSE bytes.
 *
 * Order guarantees: `start` comes first (with the first chunk), `end` comes last and only after
 * a clean finish (`data: [DONE]` or a clean EOF); a failed stream throws instead of ending.
 */
export type UpstreamPart =
  | { type: 'start'; id: string; model: string; created: number }
  | { type: 'content'; text: string }
  /** `field`: the delta field it came in (`reasoning` when a chunk had both, as newer vLLM sends): the one to send it back in. */
  | { type: 'reasoning'; text: string; field: ReasoningField }
  | ToolCallDeltaPart
  /**
   * `stopString`: the stop string that ended the decode (vLLM's `stop_reason`, SGLang's `matched_stop`);
   * `stopTokenId`: the stop token's id in the same fields instead, when a token in the stop list ended it.
   */
  | { type: 'finish'; reason: string; stopString?: string; stopTokenId?: number }
  /**
   * May arrive more than once (vLLM `continuous_usage_stats`); the last one is the total. Comes
   * before the other parts of its chunk, counting them.
   */
  | { type: 'usage'; usage: UpstreamUsage }
  | { type: 'end' };

/** Where an upstream with a reasoning parser puts a thinking model's reasoning: vLLM reads `reasoning` on input, llama.cpp `reasoning_content`. */
export type ReasoningField = 'reasoning' | 'reasoning_content';

/** One fragment of a native (`tools`) call. Fields are present only when the chunk carried them. */
export interface ToolCallDeltaPart {
  type: 'tool-call-delta';
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's breakdown of the prompt (`cached_tokens`: what the prefix cache held), when the server sends it. */
  prompt_tokens_details?: UsageDetails;
  /** OpenAI's breakdown of the completion (`reasoning_tokens`), when the server sends it. */
  completion_tokens_details?: UsageDetails;
}

/** The counts of a usage details object, by their OpenAI names. */
export type UsageDetails = Record<string, number>;
