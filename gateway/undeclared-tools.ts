import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { ChatRequest } from './chat-request-schema.ts';

/**
 * A call to a name no one offered: the reason the gateway gives for refusing it, or undefined
 * for a call the client is to run.
 */
export type UndeclaredToolCheck = (name: string) => string | undefined;

/**
 * OpenAI's models call only the tools a request lists, and vLLM parses no calls at all for a
 * request that lists none; a model served here may still write a call to a name nobody offered
 * (one from its training, or made up). Passed on as `tool_calls`, it would reach a client that
 * cannot run it: a plain chat app, that expects no calls at all, loses its answer. The gateway
 * refuses such a call as soon as its name is decoded, as it does a tool's reject, and the model
 * hears which tools there are. A request listing a tool of another type than `function` (OpenAI's
 * `custom`) names its tools in ways not read here: every call may be its client's (undefined).
 */
export function undeclaredToolCheck(requestTools: ChatRequest['tools'], gatewayTools: ReadonlyMap<string, ToolPlugin>): UndeclaredToolCheck | undefined {
  if (requestTools?.some((tool) => tool.type !== 'function')) return undefined;
  const declared = new Set((requestTools ?? []).flatMap((tool) => (tool.function ? [tool.function.name] : [])));
  const offered = [...new Set([...gatewayTools.keys(), ...declared])].sort();
  const tools = offered.length === 0 ? 'it has none' : `its tools are ${offered.join(', ')}`;
  return (name) => (declared.has(name) || gatewayTools.has(name) ? undefined : `there is no tool named ${JSON.stringify(name)} in this request (${tools})`);
}
