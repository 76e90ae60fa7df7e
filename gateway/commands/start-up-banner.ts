import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { SCENARIOS_DIR } from '../../sim/scenario-loader.ts';
import { DEFAULT_PROFILE, type SimOptions } from '../../sim/sim-server.ts';
import type { GatewayConfig } from '../config.ts';
import { isLoopbackAddress } from '../host-check.ts';
import { chooseParser } from '../parser-selection.ts';
import type { ConveyorHandle } from '../start-conveyor.ts';
import { baseUrlHint } from './base-url-hint.ts';

/** What the banner says about the embedded simulator, as serve was given it. */
export interface BannerSimSettings {
  profile?: SimOptions['profile'];
  modelName?: string;
  scenarioDirs?: readonly string[];
}

/**
 * The start-up banner on stdout: where the gateway listens, its upstream, sandbox and tools, and a
 * request to try. Returns early, without the "try:", when a signal came while it waited on the
 * upstream's readiness (no "try:" under "shutting down").
 */
export async function printBanner(conveyor: ConveyorHandle, sim: BannerSimSettings, stopping: () => boolean): Promise<void> {
  const { url, config } = conveyor.gateway;
  const upstream = config.upstream;
  console.log(`conveyor gateway listening on ${url}/v1`);
  const { address } = conveyor.gateway.server.address() as AddressInfo;
  if (config.apiKeys.length === 0 && !isLoopbackAddress(address)) {
    console.log(`warning: no --api-key on ${address}, which other machines can reach: anyone who can reach it can run its tools`);
  }
  const replicas = typeof upstream.baseUrl === 'string' ? [upstream.baseUrl] : upstream.baseUrl;
  console.log(`upstream: ${conveyor.sim ? `embedded simulator at ${conveyor.sim.url} (profile ${typeof sim.profile === 'object' ? sim.profile.name : (sim.profile ?? DEFAULT_PROFILE)})` : replicas.join(', ')}${replicas.length > 1 ? ' (replicas)' : ''}`);
  if (!conveyor.sim) {
    // Started before its upstream (a vLLM still loading weights) is fine; say so rather than let the first request find out.
    const ready = await conveyor.gateway.readiness.check();
    if (stopping()) return;
    for (const r of ready.upstream) if (r.error) console.log(`  not ready yet: ${r.error.message}${baseUrlHint(r.base_url, r.error.message)} (GET /health/ready says when it is)`);
  }
  console.log(`sandbox: ${conveyor.sandbox ? JSON.stringify(conveyor.sandbox.protections()) : 'off (the python tool is disabled)'}`);
  // A module that replaced a built-in under its name is said to, as /health's `module` does.
  const toolNames = [...conveyor.gateway.tools.keys()].map((name) => (conveyor.replacedBuiltins.has(name) ? `${name} (from ${conveyor.replacedBuiltins.get(name)})` : name));
  console.log(`tools: ${toolNames.join(', ')} (isolates: ${conveyor.runtimes.isolate.available ? 'on' : `off, ${conveyor.runtimes.isolate.reason}`})`);
  const builtins = [...conveyor.gateway.tools.keys()].filter((name) => !conveyor.replacedBuiltins.has(name));
  const model = upstream.model ?? (conveyor.sim ? (sim.modelName ?? 'mistral-7b-instruct-sim') : '<model>');
  const shipped = sim.scenarioDirs === undefined || sim.scenarioDirs.some((dir) => resolve(dir) === SCENARIOS_DIR);
  const example = tryExample({ url, model, keyed: config.apiKeys.length > 0, config, builtins, sim: conveyor.sim ? { shippedScenarios: shipped } : undefined });
  for (const line of ['', ...example]) console.log(line);
  if (config.playground) console.log(`or open ${url}/ in a browser: the playground, with tool events and a live timeline`);
}

export interface TryExampleSettings {
  /** The gateway's URL, without /v1. */
  url: string;
  model: string;
  /**
   * The gateway takes keys: the example sends `$CONVEYOR_API_KEY`, never a key itself, since
   * stdout is also the log (docker logs, journald) and a key there is a key leaked.
   */
  keyed?: boolean;
  config: Pick<GatewayConfig, 'toolParsers' | 'defaultToolParser'>;
  /** The built-in tools that run (a module's tool of a built-in's name is not the built-in). */
  builtins: readonly string[];
  /** The embedded simulator, when it is the upstream: whether its shipped scenarios are loaded. */
  sim?: { shippedScenarios: boolean };
}

/**
 * The banner's "try:" lines: a request that does what the README says with these settings. The
 * simulator answers only what a scenario matches: the shipped sine wave needs them and the python
 * tool (off: `--plugins '{"python":false}'`), their calculator call the calculator; with the
 * author's own scenarios (`--sim-scenarios`) only the request's shape can be given. A real model
 * answers anything, and the python tool runs the fence it writes when there is one.
 */
export function tryExample(settings: TryExampleSettings): string[] {
  const { sim, builtins } = settings;
  if (sim && !sim.shippedScenarios) {
    return [
      'try: a request that a rule of your scenarios (--sim-scenarios) matches; the shipped ones are not loaded',
      ...curl(settings, { content: '<what your rule matches>' }),
    ];
  }
  if (builtins.includes('python')) return ['try:', ...curl(settings, { content: 'Plot a sine wave in Python using only the standard library.' })];
  if (!sim) return ['try:', ...curl(settings, { content: 'What is 200*701?' })];
  if (builtins.includes('calculator')) {
    // The shipped scenario writes Mistral's [TOOL_CALLS]: a model name no rule reads as Mistral needs the request to say so.
    const mistral = chooseParser(settings.config as GatewayConfig, settings.model).format === 'mistral';
    return ['try:', ...curl(settings, { content: 'What is 200*701?', ...(mistral ? {} : { tool_parser: 'mistral' }) })];
  }
  return ['try: no example fits: the shipped scenarios that run a tool call python or calculator, both off here (--plugins)'];
}

function curl({ url, model, keyed }: TryExampleSettings, { content, ...extra }: { content: string; tool_parser?: string }): string[] {
  const body = JSON.stringify({ model, stream: true, ...extra, messages: [{ role: 'user', content }] });
  const auth = keyed ? ' -H "Authorization: Bearer $CONVEYOR_API_KEY"' : '';
  const lines = [`  curl -N ${url}/v1/chat/completions -H 'Content-Type: application/json'${auth} \\`, `    -d '${body}'`];
  return keyed ? [...lines, '  (first: export CONVEYOR_API_KEY=<one of the keys from --api-key or CONVEYOR_API_KEYS>; no key is printed here)'] : lines;
}
