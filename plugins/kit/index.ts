/**
 * The plugin authoring kit: everything a tool author imports. See plugins/README.md.
 */
export { definePlugin, parametersJsonSchema, reject } from './define-plugin.ts';
export { defineCommandPlugin } from './define-command-plugin.ts';
export type { CommandPluginDefinition } from './define-command-plugin.ts';
export type { PluginContext, PluginDefinition, PluginHooks, PluginLimits, PluginRuntime } from './define-plugin.ts';
export { GuestError } from './guest-js.ts';
export type { GuestJs, GuestRunOptions } from './guest-js.ts';
export { inlineTool } from './inline-tool.ts';
export type { InlineToolOptions } from './inline-tool.ts';
export { runScriptedCall } from './testing.ts';
export type { ScriptedCall, ScriptedRun } from './testing.ts';
export { toolFromPlugin } from './tool-from-plugin.ts';
export type { RuntimeTool, ToolFromPluginOptions } from './tool-from-plugin.ts';
export { createRuntimePools, RuntimePools, runtimesReport } from '../../sandbox/runtimes/runtime-pools.ts';
export type { RuntimePoolsOptions, RuntimesReport } from '../../sandbox/runtimes/runtime-pools.ts';
export type { ProcessProtections } from '../../sandbox/runtimes/process-sandbox.ts';
export type { ToolCallContext, ToolExecution, ToolPlugin, ToolProgress, ToolResult, Verdict } from '../plugin-types.ts';
// onPiece's argument, so a hook written apart from definePlugin can be typed (`Extract<Piece, { kind: 'field' }>` for one kind).
export type { Piece } from '../../parsers/parser-events.ts';
