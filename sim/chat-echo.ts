import { responseRole } from './chat-response-role.ts';
import { contentText } from './scenario-matcher.ts';

interface EchoRequest {
  echo?: boolean | null | undefined;
  add_generation_prompt?: unknown;
  messages: ReadonlyArray<{ role: string; content?: unknown }>;
}

/**
 * What vLLM's chat `echo` puts before the reply (serving_chat, v0.6–0.11): the last message's
 * content, but only when that message has the response's role (chat-response-role.ts).
 * Clients continuing an assistant prefix (`continue_final_message`) rely on it to read the whole
 * message back; ignoring the field handed them the continuation alone. Undefined: echo is off.
 */
export function echoPrefix(body: EchoRequest): string | undefined {
  if (body.echo !== true) return undefined;
  const last = body.messages.at(-1);
  // vLLM's conversation joins a list of text parts with "\n", as contentText does.
  return last !== undefined && last.role === responseRole(body) ? contentText(last.content) : '';
}
