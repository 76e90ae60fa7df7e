import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { ChatRequest } from './chat-request-schema.ts';

/**
 * A call to a name no one offered: the reason the gateway gives for refusing it, or undefined
 * for a call the client is to run.
 */
export type UndeclaredToolCheck = (name: string) => string | undefined;

/** How many of the request's tool names a refusal lists (a request may list hundreds). */
const LISTED = 20;

const checks = new WeakMap<ChatRequest, WeakMap<ReadonlyMap<string, ToolPlugin>, UndeclaredToolCheck | undefined>>();

/**
 * OpenAI's models call only the tools a request lists, and vLLM parses no calls at all for a
 * request that lists none; a model served here may still write a call to a name nobody offered
 * (one from its training, or made up). Passed on as `tool_calls`, it would reach a client that
 * cannot run it: a plain chat app, that expects no calls at all, loses its answer. The gateway
 * refuses such a call as soon as its name is decoded, as it does a tool's reject, and the model
 * hears which tools there are. Declared are the request's `tools` and, for OpenAI's deprecated
 * function calling, its `functions`. A request listing a tool of another type than `function`
 * (OpenAI's `custom`) names its tools in ways not read here: every call may be its client's
 * (undefined). Made once per request and gateway tool set; the reason's list only when a call is refused.
 */
export function undeclaredToolCheck(request: ChatRequest, gatewayTools: ReadonlyMap<string, ToolPlugin>): UndeclaredToolCheck | undefined {
  let byTools = checks.get(request);
  if (byTools === undefined) checks.set(request, (byTools = new WeakMap()));
  if (byTools.has(gatewayTools)) return byTools.get(gatewayTools);
  const check = makeCheck(request, gatewayTools);
  byTools.set(gatewayTools, check);
  return check;
}

function makeCheck(request: ChatRequest, gatewayTools: ReadonlyMap<string, ToolPlugin>): UndeclaredToolCheck | undefined {
  if (request.tools?.some((tool) => tool.type !== 'function')) return undefined;
  const functions = (request as { functions?: unknown }).functions;
  const declared = new Set([
    ...(request.tools ?? []).flatMap((tool) => (tool.function ? [tool.function.name] : [])),
    ...(Array.isArray(functions) ? functions.flatMap((f: { name?: unknown } | null) => (typeof f?.name === 'string' ? [f.name] : [])) : []),
  ]);
  let tools: string | undefined;
  const toolList = (): string => {
    if (tools !== undefined) return tools;
    const offered = [...new Set([...gatewayTools.keys(), ...declared])].sort();
    const listed = offered.length > LISTED ? `${offered.slice(0, LISTED).join(', ')} and ${offered.length - LISTED} more` : offered.join(', ');
    return (tools = offered.length === 0 ? 'it has none' : `its tools are ${listed}`);
  };
  return (name) => (declared.has(name) || gatewayTools.has(name) ? undefined : `there is no tool named ${JSON.stringify(name)} in this request (${toolList()})`);
}
