import { afterAll, afterEach } from 'vitest';
import type { GatewayConfigInput } from '../../gateway/config.ts';
import { startGateway, type GatewayDeps, type GatewayHandle } from '../../gateway/server.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, startTestUpstream, type TestUpstream, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';

export interface ScriptedGateway {
  /** Starts a scripted upstream and a real gateway in front of it; both are closed after the test. */
  start(handler: UpstreamHandler, deps?: Partial<GatewayDeps>, config?: Partial<GatewayConfigInput>): Promise<GatewayHandle>;
  /** The upstream of the test in progress (its recorded requests); throws before `start`. */
  readonly upstream: TestUpstream;
}

/**
 * For a test file whose tests each put the gateway in front of an upstream they script: call once
 * at the top level; it registers the clean-up hooks (a second `start` in a test closes the first pair). `config.upstream.baseUrl` may add replicas
 * around the scripted one (`[dead, SCRIPTED]` puts it second).
 */
export function scriptedGateway(): ScriptedGateway {
  let upstream: TestUpstream | undefined;
  let gateway: GatewayHandle | undefined;
  const close = async (): Promise<void> => {
    await gateway?.close();
    await upstream?.close();
    gateway = upstream = undefined;
  };
  afterEach(close);
  afterAll(closeUpstreamPools);
  return {
    async start(handler, deps = {}, config = {}) {
      await close();
      upstream = await startTestUpstream(handler);
      const configured = config.upstream?.baseUrl;
      const baseUrl = Array.isArray(configured) ? configured.map((url) => (url === SCRIPTED ? upstream!.baseUrl : url)) : upstream.baseUrl;
      gateway = await startGateway({ port: 0, ...config, upstream: { ...config.upstream, baseUrl } }, { tools: new Map(), ...deps });
      return gateway;
    },
    get upstream() {
      if (!upstream) throw new Error('scriptedGateway: start() has not been called');
      return upstream;
    },
  };
}

/** Stands for the scripted upstream's URL in a list of replicas passed to `start`. */
export const SCRIPTED = 'scripted://upstream';

/** A gateway tool that takes the whole call and answers `answer(args)`. */
export function answeringTool(name: string, answer: (args: Record<string, unknown>) => string): ToolPlugin {
  return {
    name,
    description: `${name} (a test tool)`,
    parameters: { type: 'object' },
    consumes: 'call',
    start: () => ({ piece: () => undefined, end: async (args) => ({ ok: true, content: answer(args) }), abort: () => {} }),
  };
}

/** A whole-call gateway tool named `wait` whose call runs until it is aborted, and then ends with the abort's reason as its error. */
export const untilAbortedTool: ToolPlugin = {
  name: 'wait',
  description: 'wait (a test tool)',
  parameters: { type: 'object' },
  consumes: 'call',
  start: () => {
    let stop!: (err: Error) => void;
    const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
    // A call aborted before its end is never asked for its end.
    stopped.catch(() => undefined);
    return { piece: () => undefined, end: () => stopped, abort: (reason) => stop(new Error(reason)) };
  },
};

/** The tools map `start` takes in its deps. */
export function toolMap(...tools: ToolPlugin[]): Map<string, ToolPlugin> {
  return new Map(tools.map((t) => [t.name, t]));
}

/**
 * A model that calls one tool, then answers: a conversation with no tool observation yet gets
 * `call` (Hermes markup, which the gateway reads for a Qwen model name such as MODEL), one that
 * has one gets `answer(observation)`.
 */
export function callThenAnswer(call: { name: string; arguments: Record<string, unknown> }, answer: (observation: string) => string): UpstreamHandler {
  return (_req, res, body) => {
    const observation = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
    const content = observation ? answer(observation.content) : `<tool_call>\n${JSON.stringify(call)}\n</tool_call>`;
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
}

/** `handler`, behind a `GET /models` that lists `models` as vLLM does (`conveyor serve` asks it at start). */
export function listingModels(handler: UpstreamHandler, models: string[]): UpstreamHandler {
  return (req, res, body) => {
    if (req.method !== 'GET' || !req.url?.endsWith('/models')) return handler(req, res, body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'vllm' })) }));
  };
}
