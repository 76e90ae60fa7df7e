import { readLaxBool } from './pydantic-lax.ts';

interface RoleRequest {
  add_generation_prompt?: unknown;
  messages: ReadonlyArray<{ role: string }>;
}

/**
 * The role a chat response takes, as vLLM's get_chat_request_role decides it: "assistant" under
 * the default `add_generation_prompt`, else the last message's own role (a client that turns the
 * generation prompt off is continuing that message, whoever wrote it).
 */
export function responseRole(body: RoleRequest): string {
  const read = body.add_generation_prompt === undefined ? { value: true } : readLaxBool(body.add_generation_prompt);
  const generates = 'value' in read ? read.value : true;
  return generates ? 'assistant' : (body.messages.at(-1)?.role ?? 'assistant');
}
