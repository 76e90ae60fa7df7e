/**
 * vLLM's `--reasoning-parser` for the simulator: a thinking model's `<think>…</think>` block leaves
 * the server as `reasoning_content` (streamed deltas, or the message's field) and only the rest as
 * content, which the tool parser then reads.
 *
 * - `deepseek_r1`: the chat template opens the block in the prompt, so the reply is reasoning from
 *   its start (a `<think>` there is dropped) up to `</think>`; with no `</think>`, all of it.
 * - `qwen3`: reasoning only when the reply opens the block itself; otherwise all of it is content
 *   (thinking switched off).
 *
 * The markers are neither. As with the tool parser (mistral-tool-calls.ts), the simulator knows its
 * whole reply before the first token: the split is found once and each token's text mapped onto it.
 */

export const REASONING_PARSERS = ['deepseek_r1', 'qwen3'] as const;
export type ReasoningParserName = (typeof REASONING_PARSERS)[number];

const OPEN = '<think>';
const CLOSE = '</think>';

/** Where the reasoning and the content lie in a reply: `[reasoningStart, reasoningEnd)`, then content from `contentStart`. */
export interface ReasoningLayout {
  reasoningStart: number;
  reasoningEnd: number;
  contentStart: number;
}

export function layoutReasoning(reply: string, parser: ReasoningParserName): ReasoningLayout {
  const opened = reply.startsWith(OPEN);
  if (!opened && parser === 'qwen3') return { reasoningStart: 0, reasoningEnd: 0, contentStart: 0 };
  const reasoningStart = opened ? OPEN.length : 0;
  const close = reply.indexOf(CLOSE, reasoningStart);
  if (close === -1) return { reasoningStart, reasoningEnd: reply.length, contentStart: reply.length };
  return { reasoningStart, reasoningEnd: close, contentStart: close + CLOSE.length };
}

export interface ReasoningDelta {
  reasoning?: string;
  content?: string;
}

/** The parts of `reply`'s text `[from, from + length)` laid out as `layout`: neither for a stretch of markers only. */
function partsOf(reply: string, from: number, length: number, layout: ReasoningLayout): ReasoningDelta {
  const to = from + length;
  const out: ReasoningDelta = {};
  const r0 = Math.max(from, layout.reasoningStart);
  const r1 = Math.min(to, layout.reasoningEnd);
  if (r1 > r0) out.reasoning = reply.slice(r0, r1);
  const c0 = Math.max(from, layout.contentStart);
  if (to > c0) out.content = reply.slice(c0, to);
  return out;
}

/** One reply's tokens, in order, as reasoning and content. */
export class ReasoningStream {
  readonly #reply: string;
  readonly #layout: ReasoningLayout;
  #at = 0;

  constructor(reply: string, parser: ReasoningParserName) {
    this.#reply = reply;
    this.#layout = layoutReasoning(reply, parser);
  }

  /** The content part of the reply, as the tool parser sees it (what its layout is found in). */
  get content(): string {
    return this.#reply.slice(this.#layout.contentStart);
  }

  push(text: string): ReasoningDelta {
    const from = this.#at;
    this.#at += text.length;
    return partsOf(this.#reply, from, text.length, this.#layout);
  }
}

/** A whole generated text (a prefix of the reply, when a limit cut it) as the message's reasoning and content. */
export function splitWholeReply(text: string, parser: ReasoningParserName): { reasoning: string | null; content: string } {
  const layout = layoutReasoning(text, parser);
  const reasoning = text.slice(layout.reasoningStart, layout.reasoningEnd);
  return { reasoning: layout.reasoningEnd > layout.reasoningStart || layout.reasoningStart > 0 ? reasoning : null, content: text.slice(layout.contentStart) };
}
