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
      if (!plugin || tool.function?.parameters) return tool;
      return { ...tool, function: { description: plugin.description, ...tool.function, name: plugin.name, parameters: plugin.parameters } };
    }),
  };
}
