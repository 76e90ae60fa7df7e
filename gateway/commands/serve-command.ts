import { InvalidArgumentError, Option, type Command } from 'commander';
import { pino } from 'pino';
import { prettifyError, ZodError } from 'zod';
import { builtinPluginsConfigSchema, type BuiltinPluginsConfigInput } from '../../plugins/builtin-plugins-config.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startConveyor } from '../start-conveyor.ts';
import { DEFAULT_PROFILE } from '../../sim/sim-server.ts';
import { shippedProfileNames } from '../../sim/timing-profile.ts';

interface ServeOptions {
  host: string;
  port: number;
  upstream?: string[];
  model?: string;
  upstreamApiKey?: string;
  apiKey?: string[] | string;
  partialExecution: boolean;
  conversationAffinity: boolean;
  maxToolRounds: number;
  shutdownGrace: number;
  simProfile: string;
  python?: string;
  plugins?: string;
  logLevel: string;
  allowedHost?: string[];
  allowedOrigin?: string[];
  tool?: string[];
}

const int = (v: string) => Number.parseInt(v, 10);
const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected seconds ≥ 0');
  return n;
};

/** `conveyor serve` (the default command, `npm start`): the gateway, on the simulator unless --upstream is given. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve', { isDefault: true })
    .description('run the gateway (default: in front of the embedded simulator)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', int, 8080)
    .option(
      '--upstream <url...>',
      'OpenAI-compatible upstream base URL, e.g. http://127.0.0.1:8000/v1 (default: the embedded simulator); several (repeated or comma-separated) are replicas of one model',
    )
    .option('--no-conversation-affinity', "with several upstreams: send every round to the least loaded replica, not back to the conversation's own")
    .option('--model <name>', "model name sent upstream for every request (default: the client's model)")
    .addOption(new Option('--upstream-api-key <key>', 'API key for the upstream').env('CONVEYOR_UPSTREAM_API_KEY'))
    .addOption(new Option('--api-key <key...>', 'accept only these bearer keys from clients').env('CONVEYOR_API_KEYS'))
    .option('--allowed-host <name...>', 'without --api-key on a loopback address, names besides loopback ones that requests may be addressed to (Host), e.g. a local proxy\'s')
    .option('--allowed-origin <origin...>', 'web pages on these origins may call the gateway from the browser (CORS), e.g. http://localhost:3000; * allows any page and needs --api-key')
    .option('--no-partial-execution', 'sequential baseline: run tools only after each decode ends')
    .option('--max-tool-rounds <n>', 'model→tool→model rounds per request', int, 8)
    .option('--shutdown-grace <seconds>', 'on SIGTERM/SIGINT, how long requests in flight may finish before they are cut (a second signal cuts at once)', seconds, 30)
    .option('--sim-profile <name>', `timing profile of the embedded simulator: ${shippedProfileNames().join(', ')}, or a JSON file`, DEFAULT_PROFILE)
    .option('--python <path>', 'Python interpreter for the python tool (default: /usr/bin/python3, else python3)')
    .option('--tool <module...>', 'plugin modules to run as tools, each default-exporting definePlugin(...) (plugins/README.md); paths relative to the working directory')
    .addOption(
      new Option('--plugins <json>', 'built-in tools and their settings, e.g. \'{"database":{"file":"shop.sqlite"},"http_get":false}\' (plugins/README.md)').env('CONVEYOR_PLUGINS'),
    )
    .addOption(
      new Option('--log-level <level>', 'JSON lines on stdout: one per request at info, unexpected errors with their stack at error; /health and /metrics at debug')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info')
        .env('CONVEYOR_LOG_LEVEL'),
    )
    .action(serve);
}

async function serve(opts: ServeOptions): Promise<void> {
  const apiKeys = typeof opts.apiKey === 'string' ? opts.apiKey.split(',') : (opts.apiKey ?? []);
  const upstreams = opts.upstream?.flatMap((u) => u.split(',')).filter((u) => u !== '');
  const baseUrl = upstreams === undefined || upstreams.length === 0 ? undefined : upstreams.length === 1 ? upstreams[0] : upstreams;
  const conveyor = await startConveyor({
    gateway: {
      host: opts.host,
      port: opts.port,
      upstream: { baseUrl, model: opts.model, apiKey: opts.upstreamApiKey, conversationAffinity: opts.conversationAffinity },
      apiKeys,
      allowedHosts: opts.allowedHost ?? [],
      allowedOrigins: opts.allowedOrigin?.flatMap((o) => o.split(',')).filter((o) => o !== '') ?? [],
      partialExecution: opts.partialExecution,
      maxToolRounds: opts.maxToolRounds,
    },
    sim: { profile: opts.simProfile },
    sandbox: { python: opts.python },
    plugins: opts.plugins ? parsePluginsOption(opts.plugins) : undefined,
    toolModules: opts.tool?.flatMap((t) => t.split(',')).filter((t) => t !== ''),
    logger: pino({ level: opts.logLevel }),
  });

  const { url } = conveyor.gateway;
  const model = opts.model ?? (conveyor.sim ? 'mistral-7b-instruct-sim' : '<model>');
  const auth = apiKeys.length ? ` -H 'Authorization: Bearer ${apiKeys[0]}'` : '';
  console.log(`conveyor gateway listening on ${url}/v1`);
  console.log(`upstream: ${conveyor.sim ? `embedded simulator at ${conveyor.sim.url} (profile ${opts.simProfile})` : upstreams!.join(', ')}${upstreams && upstreams.length > 1 ? ' (replicas)' : ''}`);
  console.log(`sandbox: ${conveyor.sandbox ? JSON.stringify(conveyor.sandbox.protections()) : 'off (the python tool is disabled)'}`);
  console.log(`tools: ${[...conveyor.gateway.tools.keys()].join(', ')} (isolates: ${conveyor.runtimes.isolate.available ? 'on' : `off, ${conveyor.runtimes.isolate.reason}`})`);
  console.log('\ntry:');
  console.log(
    `  curl -N ${url}/v1/chat/completions -H 'Content-Type: application/json'${auth} \\\n` +
      `    -d '{"model":"${model}","stream":true,"messages":[{"role":"user","content":"Plot a sine wave in Python."}]}'`,
  );

  let closing = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (closing) process.exit(1);
      closing = true;
      console.log(`\nshutting down: requests in flight have ${opts.shutdownGrace} s to finish (${signal} again to stop now)…`);
      conveyor
        .close({ graceMs: opts.shutdownGrace * 1000 })
        .then(() => closeUpstreamPools())
        .then(() => process.exit(0), () => process.exit(1));
    });
  }
}

function parsePluginsOption(text: string): BuiltinPluginsConfigInput {
  try {
    return builtinPluginsConfigSchema.parse(JSON.parse(text));
  } catch (err) {
    const detail = err instanceof ZodError ? prettifyError(err) : (err as Error).message;
    throw new InvalidArgumentError(`--plugins: ${detail}`);
  }
}
