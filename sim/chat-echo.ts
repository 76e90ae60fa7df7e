import { readLaxBool } from './pydantic-lax.ts';
import { contentText } from './scenario-matcher.ts';

interface EchoRequest {
  echo?: boolean | null | undefined;
  add_generation_prompt?: unknown;
  messages: ReadonlyArray<{ role: string; content?: unknown }>;
}

/**
 * What vLLM's chat `echo` puts before the reply (serving_chat, v0.6–0.11): the last message's
 * content, but only when that message has the response's role — "assistant" under the default
 * `add_generation_prompt`, the last message's own role without it (get_chat_request_role).
 * Clients continuing an assistant prefix (`continue_final_message`) rely on it to read the whole
 * message back; ignoring the field handed them the continuation alone. Undefined: echo is off.
 */
export function echoPrefix(body: EchoRequest): string | undefined {
  if (body.echo !== true) return undefined;
  const last = body.messages.at(-1);
  if (last === undefined) return '';
  const read = body.add_generation_prompt === undefined ? { value: true } : readLaxBool(body.add_generation_prompt);
  const generates = 'value' in read ? read.value : true;
  const role = generates ? 'assistant' : last.role;
  // vLLM's conversation joins a list of text parts with "\n", as contentText does.
  return last.role === role ? contentText(last.content) : '';
}
