import { lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngineLoop } from './engine-loop.ts';
import { PrefixCache } from './prefix-cache.ts';
import type { SimCounters } from './engine-stats.ts';
import { SCENARIOS_DIR } from './scenario-loader.ts';
import type { Scenario } from './scenario-schema.ts';
import { ScenarioSet } from './scenario-set.ts';
import { createRequestListener } from './server-routes.ts';
import { loadTimingProfile, parseTimingProfile, type TimingProfile } from './timing-profile.ts';
import type { ReasoningParserName } from './reasoning-split.ts';

export type { SimCounters } from './engine-stats.ts';
export type { Scenario } from './scenario-schema.ts';
export type { TimingProfile } from './timing-profile.ts';

export interface SimOptions {
  /** Interface to listen on. Default '127.0.0.1'. */
  host?: string;
  /** Default 0: any free port (read it back from the handle). */
  port?: number;
  /**
   * A Unix domain socket path to listen on instead of host and port, as vLLM's `--uds`; the
   * handle's url is then `unix:PATH:/v1`. A socket file left by an earlier run is replaced.
   */
  uds?: string;
  /** A shipped profile's name, a path to a profile JSON file, or a profile object. Default 'mistral-7b-rtx3090'. */
  profile?: string | TimingProfile;
  /** Folders of scenario JSON files, tried in order. Default: [sim/scenarios]. */
  scenarioDirs?: string[];
  /** Extra scenarios, tried before those of scenarioDirs. */
  scenarios?: Scenario[];
  /** Served model name, as in /v1/models and the responses. Default 'mistral-7b-instruct-sim'. */
  modelName?: string;
  /**
   * The model as loaded, vLLM's `--model` (the served name is `--served-model-name`): /v1/models
   * gives it as the served model's `root`. Default: modelName.
   */
  modelPath?: string;
  /**
   * Tokens the automatic prefix cache holds (vLLM's is on by default and as large as the free KV
   * cache: ~450k tokens for Mistral-7B on an 80 GB GPU). 0 turns it off. Default 262,144.
   */
  prefixCacheTokens?: number;
  /** Overrides the profile's `maxNumBatchedTokens` (vLLM's `--max-num-batched-tokens`): the tokens one step may process. */
  maxNumBatchedTokens?: number;
  /** Overrides the profile's `maxModelLen` (vLLM's `--max-model-len`): the context, prompt and reply together. */
  maxModelLen?: number;
  /**
   * vLLM's `--api-key`: requests under /v1 without `Authorization: Bearer <key>` get 401
   * `{"error": "Unauthorized"}`; /health, /metrics, /version, /ping stay open. Default: none asked.
   */
  apiKey?: string;
  /**
   * vLLM's `--enable-auto-tool-choice --tool-call-parser mistral`: for a request with `tools` (and
   * `tool_choice` other than "none"), a reply's `[TOOL_CALLS]` list is sent as `tool_calls`
   * (streamed: `delta.tool_calls`, arguments as they are written) with finish reason `tool_calls`.
   * Default: off, the text as written (vLLM without those flags).
   */
  toolCallParser?: ToolCallParserName;
  /**
   * vLLM's `--reasoning-parser deepseek_r1|qwen3`: a reply's `<think>…</think>` block is sent as
   * `reasoning_content` (streamed deltas, or the message's field), the rest as content, which the
   * tool parser reads. Default: off, the text as written.
   */
  reasoningParser?: ReasoningParserName;
  /**
   * vLLM's `--enable-prompt-tokens-details`: a request's final usage carries
   * `prompt_tokens_details: {cached_tokens}` when the prefix cache held part of its prompt.
   * Default: off, as in vLLM (`prompt_tokens_details: null`).
   */
  enablePromptTokensDetails?: boolean;
}

/** The server-side tool parsers the simulator has (vLLM's `--tool-call-parser` names). */
export const TOOL_CALL_PARSERS = ['mistral'] as const;
export type ToolCallParserName = (typeof TOOL_CALL_PARSERS)[number];

export const DEFAULT_PREFIX_CACHE_TOKENS = 262_144;

export interface SimHandle {
  /** Base URL for OpenAI clients, ending in /v1, e.g. http://127.0.0.1:PORT/v1 (unix:PATH:/v1 with `uds`). */
  url: string;
  /** The TCP port; 0 on a Unix domain socket. */
  port: number;
  counters(): SimCounters;
  /** Stops the engine loop (unfinished requests are cut off) and the HTTP server. */
  close(): Promise<void>;
}

export const DEFAULT_PROFILE = 'mistral-7b-rtx3090';
export const DEFAULT_MODEL_NAME = 'mistral-7b-instruct-sim';

/**
 * Starts a simulator server: one shared continuous-batching engine loop behind vLLM's
 * OpenAI-compatible routes. Configuration problems reject with SimConfigError.
 */
export async function startSim(options: SimOptions = {}): Promise<SimHandle> {
  const profile = profileWithOverrides(loadTimingProfile(options.profile ?? DEFAULT_PROFILE), options);
  const scenarios = ScenarioSet.load({ inMemory: options.scenarios, dirs: options.scenarioDirs ?? [SCENARIOS_DIR] });
  const cacheTokens = options.prefixCacheTokens ?? DEFAULT_PREFIX_CACHE_TOKENS;
  const engine = new EngineLoop({ profile, prefixCache: cacheTokens > 0 ? new PrefixCache(cacheTokens) : undefined });
  const server = createServer(
    createRequestListener({
      engine,
      scenarios,
      modelName: options.modelName ?? DEFAULT_MODEL_NAME,
      modelPath: options.modelPath ?? options.modelName ?? DEFAULT_MODEL_NAME,
      toolCallParser: options.toolCallParser,
      reasoningParser: options.reasoningParser,
      promptTokensDetails: options.enablePromptTokensDetails === true,
      apiKey: options.apiKey,
    }),
  );
  const host = options.host ?? '127.0.0.1';
  let url: string;
  let port = 0;
  if (options.uds !== undefined) {
    removeStaleSocket(options.uds);
    await listen(server, options.uds);
    url = `unix:${options.uds}:/v1`;
  } else {
    await listen(server, options.port ?? 0, host);
    port = (server.address() as AddressInfo).port;
    url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  }

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    counters: () => engine.counters(),
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        engine.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** The profile with the server's flags applied over it, checked again (a 0 is refused as in the file). */
function profileWithOverrides(loaded: TimingProfile, options: SimOptions): TimingProfile {
  const { maxNumBatchedTokens, maxModelLen } = options;
  if (maxNumBatchedTokens === undefined && maxModelLen === undefined) return loaded;
  return parseTimingProfile(
    { ...loaded, ...(maxNumBatchedTokens !== undefined && { maxNumBatchedTokens }), ...(maxModelLen !== undefined && { maxModelLen }) },
    '--max-num-batched-tokens / --max-model-len',
  );
}

/** Listens on a TCP port of `host`, or on a Unix domain socket when `host` is undefined and `where` a path. */
function listen(server: Server, where: number | string, host?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof where === 'string') server.listen(where, listening);
    else server.listen(where, host, listening);
  });
}

/** A socket file outlives a process that was killed; anything else at the path is left alone (listen then fails). */
function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // Nothing there.
  }
}
