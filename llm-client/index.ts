export { streamChatCompletion } from './stream-chat-completion.ts';
export { createChatCompletionPump, pumpChatCompletion, type ChatCompletionPump, type UpstreamStream } from './pump-chat-completion.ts';
export { listModels, type UpstreamModel, type UpstreamModelList } from './list-models.ts';
export { closeUpstreamPools } from './upstream-pools.ts';
export type { UpstreamPart, ToolCallDeltaPart, UpstreamUsage } from './upstream-parts.ts';
export {
  UpstreamTimeoutsSchema,
  type UpstreamTimeouts,
  type StreamChatCompletionOptions,
  type UpstreamConnectionOptions,
  type StreamRequest,
  type ListModelsOptions,
} from './upstream-options.ts';
export { UpstreamReplicas, type ReplicaAffinity, type ReplicaHealth, type ReplicaHealthEvent, type ReplicaState } from './upstream-replicas.ts';
