import type { ChatMessage } from './chat-request-schema.ts';

const FIELDS = ['reasoning_content', 'reasoning'] as const;

/**
 * The client's assistant turns as the model wrote them, for a model whose `<think>` blocks the
 * gateway parses (ParserChoice.reasoning): its chat template reads a turn's reasoning from the
 * block in the content, where an upstream reads `reasoning_content` (the field the gateway's
 * answers split the block into, and that clients such as the Vercel AI SDK send back) or
 * `reasoning` only if it runs a reasoning parser, and then by version (vllm#38488). Each turn
 * with one of them gets it back before its text, `<think>…</think>`, as the gateway's own tool
 * rounds carry theirs (round-messages.ts); the template then shows it where it shows reasoning
 * (Qwen3: the turns since the last user message, a client's tool loop included) and drops it
 * elsewhere. A turn whose content already holds a block, or is not a string, is left as it is.
 * The same array when no turn has either field.
 */
export function withThinkingInContent(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === 'assistant' && reasoningOf(m) !== undefined)) return messages;
  return messages.map((m) => {
    const reasoning = m.role === 'assistant' ? reasoningOf(m) : undefined;
    if (reasoning === undefined) return m;
    const content = (m as { content?: unknown }).content ?? '';
    if (typeof content !== 'string' || content.includes('</think>')) return m;
    const { reasoning_content: _, reasoning: __, ...rest } = m as Record<string, unknown>;
    return { ...rest, content: `<think>${reasoning}</think>${content}` } as ChatMessage;
  });
}

function reasoningOf(message: ChatMessage): string | undefined {
  for (const field of FIELDS) {
    const value = (message as Record<string, unknown>)[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}
