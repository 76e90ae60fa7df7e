export { streamChatCompletion } from './stream-chat-completion.ts';
export { listModels, type UpstreamModel, type UpstreamModelList } from './list-models.ts';
export { closeUpstreamPools } from './upstream-pools.ts';
export type { UpstreamPart, ToolCallDeltaPart, UpstreamUsage } from './upstream-parts.ts';
export {
  UpstreamTimeoutsSchema,
  type UpstreamTimeouts,
  type StreamChatCompletionOptions,
  type ListModelsOptions,
} from './upstream-options.ts';
