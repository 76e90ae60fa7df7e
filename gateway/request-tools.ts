import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { ChatRequest } from './chat-request-schema.ts';

/**
 * A client may list a gateway tool by name alone (`{"type":"function","function":{"name":"search"}}`):
 * the gateway fills in its description and JSON Schema, so the model sees the real contract.
 * Tools the client describes itself are sent upstream exactly as given.
 */
export function withPluginSchemas(request: ChatRequest, tools: ReadonlyMap<string, ToolPlugin>): ChatRequest {
  if (!request.tools) return request;
  return {
    ...request,
    tools: request.tools.map((tool) => {
      const plugin = tool.function ? tools.get(tool.function.name) : undefined;
      if (!plugin || tool.function?.parameters != null) return tool;
      // A field sent as null (clients that serialise every field) is one left out: the plugin's fills it.
      const given = Object.fromEntries(Object.entries(tool.function ?? {}).filter(([, value]) => value != null));
      return { ...tool, function: { description: plugin.description, ...given, name: plugin.name, parameters: plugin.parameters } };
    }),
  };
}

/**
 * The gateway tools a request may run. A tool the client describes itself (with its own
 * `parameters`) is the client's to execute, even under a gateway tool's name: the model was given
 * the client's contract, so a call to it goes back to the client rather than to a plugin that
 * expects other arguments. Listed by name alone, the gateway's tool it is.
 */
export function gatewayToolsFor(request: ChatRequest, tools: ReadonlyMap<string, ToolPlugin>): ReadonlyMap<string, ToolPlugin> {
  // `parameters: null` is `parameters` left out (null reads as absent on every optional field).
  const claimed = (request.tools ?? []).flatMap((tool) => (tool.function?.parameters != null && tools.has(tool.function.name) ? [tool.function.name] : []));
  if (claimed.length === 0) return tools;
  const mine = new Map(tools);
  for (const name of claimed) mine.delete(name);
  return mine;
}
