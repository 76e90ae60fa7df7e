import { encodeText } from './mistral-tokenizer.ts';
import { contentText, type ChatMessageLike } from './scenario-matcher.ts';

// Each round resends the whole conversation, so the same message texts are tokenized again and
// again: encodeText's cache keeps a long tool output from blocking the event loop (and the
// engine's step timer) on every round.
function countTokens(text: string): number {
  return encodeText(text).length;
}

/**
 * Prompt length in tokens, from a simplified Mistral-Instruct template:
 * `<s>[INST] system\n\nuser [/INST]assistant</s>[INST] ... [/TOOL_RESULTS] tool [/TOOL_RESULTS]`.
 * Only the count matters (prefill time and usage), so the template need not be byte-exact.
 */
export function countPromptTokens(messages: readonly ChatMessageLike[]): number {
  let tokens = 1; // <s>
  let pendingSystem = '';
  for (const message of messages) {
    const text = contentText(message.content);
    switch (message.role) {
      case 'system':
      case 'developer':
        pendingSystem += `${text}\n\n`;
        break;
      case 'user':
        tokens += countTokens('[INST] ') + countTokens(pendingSystem + text) + countTokens(' [/INST]');
        pendingSystem = '';
        break;
      case 'assistant':
        tokens += countTokens(text) + 1; // </s>
        if ('tool_calls' in message && message.tool_calls !== undefined) {
          tokens += countTokens(`[TOOL_CALLS] ${JSON.stringify(message.tool_calls)}`);
        }
        break;
      default:
        tokens += countTokens('[TOOL_RESULTS] ') + countTokens(text) + countTokens(' [/TOOL_RESULTS]');
    }
  }
  if (pendingSystem) tokens += countTokens(pendingSystem);
  return tokens;
}
