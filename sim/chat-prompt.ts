import { InvalidRequestError } from '../core/errors.ts';
import { BOS_TOKEN_ID, EOS_TOKEN_ID, encodeText } from './mistral-tokenizer.ts';
import { checkContentPartTypes } from './content-part-types.ts';
import { contentText, type ChatMessageLike } from './scenario-matcher.ts';

/**
 * The prompt's token ids, from a simplified Mistral-Instruct template:
 * `<s>[INST] system\n\nuser [/INST]assistant</s>[INST] ... [/TOOL_RESULTS] tool [/TOOL_RESULTS]`,
 * with the request's tools as `[AVAILABLE_TOOLS] [...][/AVAILABLE_TOOLS]` before the last user
 * turn, where Mistral's v3 template puts them: a request with tools prefills their schemas too.
 * Its length is the prefill and the usage; its ids key the prefix cache, so a conversation resent
 * with one more turn shares every token before that turn. The template need not be byte-exact.
 *
 * Each round resends the whole conversation, so the same message texts are tokenized again and
 * again: encodeText's cache keeps a long tool output from blocking the event loop (and the
 * engine's step timer) on every round.
 */
export function promptTokenIds(messages: readonly ChatMessageLike[], tools?: readonly unknown[] | null): number[] {
  // pydantic takes an empty list (vLLM's `messages` has no length bound); the Mistral template
  // refuses it, and vLLM's apply_mistral_chat_template turns mistral_common's exception into the
  // ValueError its serving layer answers as a 400, in mistral_common's words.
  if (messages.length === 0) throw new InvalidRequestError('Conversation must have at least one message');
  checkContentPartTypes(messages);
  const ids: number[] = [BOS_TOKEN_ID];
  const add = (text: string) => {
    for (const id of encodeText(text)) ids.push(id);
  };
  let lastUser = messages.length - 1;
  while (lastUser >= 0 && messages[lastUser]!.role !== 'user') lastUser--;
  let pendingSystem = '';
  for (const [index, message] of messages.entries()) {
    const text = contentText(message.content);
    switch (message.role) {
      case 'system':
      case 'developer':
        pendingSystem += `${text}\n\n`;
        break;
      case 'user':
        if (index === lastUser && tools != null && tools.length > 0) add(`[AVAILABLE_TOOLS] ${JSON.stringify(tools)}[/AVAILABLE_TOOLS]`);
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
