import { BOS_TOKEN_ID, EOS_TOKEN_ID, encodeText } from './mistral-tokenizer.ts';
import { contentText, type ChatMessageLike } from './scenario-matcher.ts';

/**
 * The prompt's token ids, from a simplified Mistral-Instruct template:
 * `<s>[INST] system\n\nuser [/INST]assistant</s>[INST] ... [/TOOL_RESULTS] tool [/TOOL_RESULTS]`.
 * Its length is the prefill and the usage; its ids key the prefix cache, so a conversation resent
 * with one more turn shares every token before that turn. The template need not be byte-exact.
 *
 * Each round resends the whole conversation, so the same message texts are tokenized again and
 * again: encodeText's cache keeps a long tool output from blocking the event loop (and the
 * engine's step timer) on every round.
 */
export function promptTokenIds(messages: readonly ChatMessageLike[]): number[] {
  const ids: number[] = [BOS_TOKEN_ID];
  const add = (text: string) => {
    for (const id of encodeText(text)) ids.push(id);
  };
  let pendingSystem = '';
  for (const message of messages) {
    const text = contentText(message.content);
    switch (message.role) {
      case 'system':
      case 'developer':
        pendingSystem += `${text}\n\n`;
        break;
      case 'user':
        add('[INST] ');
        add(pendingSystem + text);
        add(' [/INST]');
        pendingSystem = '';
        break;
      case 'assistant':
        add(text);
        ids.push(EOS_TOKEN_ID);
        if ('tool_calls' in message && message.tool_calls !== undefined) add(`[TOOL_CALLS] ${JSON.stringify(message.tool_calls)}`);
        break;
      default:
        add('[TOOL_RESULTS] ');
        add(text);
        add(' [/TOOL_RESULTS]');
    }
  }
  if (pendingSystem) add(pendingSystem);
  return ids;
}
