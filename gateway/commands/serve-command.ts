import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { pino } from 'pino';
import { ZodError } from 'zod';
import { builtinPluginsConfigSchema, type BuiltinPluginsConfigInput } from '../../plugins/builtin-plugins-config.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { GatewayConfigError } from '../../core/errors.ts';
import { MAX_TIMER_MS } from '../../core/max-timer-ms.ts';
import { MAX_TOOL_ROUNDS } from '../config.ts';
import { readConfigFile } from '../config-file.ts';
import { describeConfigIssues } from '../config-issues.ts';
import { startConveyor, type ConveyorHandle } from '../start-conveyor.ts';
import { DEFAULT_PROFILE } from '../../sim/sim-server.ts';
import { shippedProfileNames } from '../../sim/timing-profile.ts';
import { ignoreClosedStdout } from './closed-stdout.ts';
import { wholeNumber } from './number-options.ts';
import { configFile, listOf, nonEmpty, refusedFileValue, refusedOptionValue, simProfile } from './option-values.ts';
import { printBanner } from './start-up-banner.ts';
import { exitProcess, guardProcessExit } from './exit-guard.ts';
import { toolModuleList } from './tool-module-list.ts';
import { pathList } from './path-list.ts';

interface ServeOptions {
  config?: string;
  host: string;
  port: number;
  upstream?: string[];
  model?: string;
  upstreamApiKey?: string;
  apiKey?: string[] | string;
  partialExecution: boolean;
  conversationAffinity: boolean;
  continuousUsage?: boolean;
  maxToolRounds: number;
  maxConcurrentRequests?: number;
  maxQueuedRequests?: number;
  shutdownGrace: number;
  simProfile: string;
  simScenarios?: string[];
  python?: string;
  plugins?: BuiltinPluginsConfigInput;
  logLevel: string;
  allowedHost?: string[];
  allowedOrigin?: string[];
  tool?: string[];
  toolReadPath?: string[];
  playground: boolean;
  forwardOtherEndpoints: boolean;
}

const port = wholeNumber(0, 65535);
const positiveInt = wholeNumber(1);
// Number() would read '' (an empty variable expanded in a unit file) as 0, and 0x1e as 30. Past
// Node's longest timer the grace's timer fired at once: `--shutdown-grace 3000000`, meant as "wait
// for everything", cut every request in flight on the first SIGTERM.
const MAX_SECONDS = Math.floor(MAX_TIMER_MS / 1000);
const seconds = (v: string) => {
  if (!/^\s*\d+(\.\d+)?\s*$/.test(v)) throw new InvalidArgumentError('expected seconds ≥ 0, e.g. 30 or 2.5');
  if (Number(v) > MAX_SECONDS) throw new InvalidArgumentError(`expected at most ${MAX_SECONDS} seconds (about 24.8 days, the longest timer Node keeps; past it the timer fires at once)`);
  return Number(v);
};

/** After a second signal: how long the cut answers may take before the process exits regardless. */
const FORCED_EXIT_MS = 3000;

/** `conveyor serve` (the default command, `npm start`): the gateway, on the simulator unless --upstream is given. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve', { isDefault: true })
    .description('run the gateway, in front of the embedded simulator unless --upstream is given (the default command)')
    .addOption(new Option('--config <file>', 'JSON settings (README "Config file"); the options given here win over it').env('CONVEYOR_CONFIG').argParser(configFile))
    .option('--host <host>', 'address to listen on', nonEmpty('an address or a host name (0.0.0.0 or :: for every address)'), '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', port, 8080)
    .option(
      '--upstream <url...>',
      'OpenAI-compatible upstream base URL, e.g. http://127.0.0.1:8000/v1 (default: the embedded simulator); several (repeated or comma-separated) are replicas of one model',
      listOf('an upstream base URL'),
    )
    .option('--no-conversation-affinity', "with several upstreams: send every round and every turn to the least loaded replica, not back to the conversation's own")
    .option('--continuous-usage', "ask the upstream for usage on every chunk (vLLM, SGLang), so rounds cut short by a tool's reject count in usage")
    .option('--model <name>', "model name sent upstream for every request (default: the client's model)", nonEmpty('a model name'))
    .addOption(new Option('--upstream-api-key <key>', 'API key for the upstream').env('CONVEYOR_UPSTREAM_API_KEY').argParser(nonEmpty('a key')))
    .addOption(new Option('--api-key <key...>', 'accept only these bearer keys from clients').env('CONVEYOR_API_KEYS'))
    .option('--allowed-host <name...>', 'without --api-key on a loopback address, names besides loopback ones that requests may be addressed to (Host), e.g. a local proxy\'s', listOf('a host name'))
    .option('--allowed-origin <origin...>', 'web pages on these origins may call the gateway from the browser (CORS), e.g. http://localhost:3000; * allows any page and needs --api-key', listOf('an origin'))
    .option('--no-playground', 'do not serve the playground page at /')
    .option('--no-forward-other-endpoints', 'answer 404 to /v1/… endpoints the gateway does not implement (/v1/completions, /v1/embeddings, …) instead of passing them to the upstream')
    .option('--no-partial-execution', 'sequential baseline: run tools only after each decode ends')
    .option('--max-tool-rounds <n>', `model→tool→model rounds per request (at most ${MAX_TOOL_ROUNDS})`, wholeNumber(1, MAX_TOOL_ROUNDS), 8)
    .option('--max-concurrent-requests <n>', 'requests answered at once (chat completions and forwarded /v1 requests); more wait in line (default: no limit)', positiveInt)
    .option('--max-queued-requests <n>', 'with --max-concurrent-requests: how many may wait; one more is answered 503 gateway_busy (default: 256)', wholeNumber(0))
    .option('--shutdown-grace <seconds>', 'on SIGTERM/SIGINT, how long requests in flight may finish before they are cut (a second signal cuts at once)', seconds, 30)
    .option('--sim-profile <name>', `timing profile of the embedded simulator: ${shippedProfileNames().join(', ')}, or a JSON file`, simProfile, DEFAULT_PROFILE)
    .option(
      '--sim-scenarios <dir...>',
      'folders of scenario files (sim/README.md "Scenarios") for the embedded simulator, in place of its shipped sim/scenarios (list that too to keep them); paths relative to the working directory, each value one folder, a comma included, unless only its comma-separated parts exist',
      listOf('a scenario folder'),
    )
    // An option with its variable, not the sandbox's own fallback to $CONVEYOR_PYTHON: like every
    // option's variable, it wins over the config file's sandbox.python (README "Config file").
    .addOption(
      new Option('--python <path>', 'Python interpreter for the python tool (default: /usr/bin/python3, else python3 on PATH)').env('CONVEYOR_PYTHON').argParser(nonEmpty('a Python interpreter')),
    )
    .option('--tool <module...>', 'plugin modules to run as tools, each default-exporting definePlugin(...) (plugins/README.md); paths relative to the working directory, optionally with a query the module reads (plugin.ts?name=b)', listOf('a plugin module'))
    .option(
      '--tool-read-path <path...>',
      "files or folders the --tool modules' sandboxed processes may read (runtime process/isolate), beside the repository and Node: a data file their query names; each value one path, a comma included (data,v2), unless only its comma-separated parts exist (/a,/b)",
      listOf('a path'),
    )
    .addOption(
      new Option('--plugins <json>', 'built-in tools and their settings, e.g. \'{"database":{"file":"shop.sqlite"},"http_get":false}\' (plugins/README.md)')
        .env('CONVEYOR_PLUGINS')
        .argParser(parsePluginsOption),
    )
    .addOption(
      new Option('--log-level <level>', 'JSON lines on stdout: one per request at info, unexpected errors with their stack at error; /health, /health/ready, /metrics and the playground files at debug')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info')
        .env('CONVEYOR_LOG_LEVEL'),
    )
    .action(serve);
}

async function serve(opts: ServeOptions, command: Command): Promise<void> {
  // An option counts over the file only when it was given (on the command line or in its
  // environment variable), not when it holds its default.
  const given = <K extends keyof ServeOptions>(key: K): ServeOptions[K] | undefined => {
    const source = command.getOptionValueSource(key);
    return source === undefined || source === 'default' ? undefined : opts[key];
  };
  // A list option that holds nothing (`CONVEYOR_API_KEYS=` in a container's environment, `--api-key ''`)
  // counts as not given: read as "no keys", an empty variable would drop the config file's keys and
  // leave the gateway open to anyone. Items are trimmed: `--upstream "A, B"` made a replica URL
  // with a space in it (and `A, A` two replicas), `--api-key "k1, k2"` a key " k2".
  const list = (value: string[] | string | undefined) => {
    const items = value === undefined ? [] : (typeof value === 'string' ? [value] : value).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
    return items.length === 0 ? undefined : items;
  };
  // On the command line, though, an empty key is a mistake (`--api-key "$KEY"`, KEY unset), and
  // read as none it would start the gateway open: refused as every other empty list value is.
  if (command.getOptionValueSource('apiKey') === 'cli' && list(opts.apiKey) === undefined) {
    command.error("option '--api-key <key...>' argument '' is invalid. expected a key, not an empty value (an unset variable?)");
  }
  // `--tool` splits at a comma only between modules: a query's `names=a,b` stays whole.
  const toolModules = (value: string[] | undefined) => {
    const modules = value === undefined ? [] : toolModuleList(value);
    return modules.length === 0 ? undefined : modules;
  };
  const upstreams = list(given('upstream'));
  const flags = {
    gateway: defined({
      host: given('host'),
      port: given('port'),
      apiKeys: list(given('apiKey')),
      allowedHosts: list(given('allowedHost')),
      allowedOrigins: list(given('allowedOrigin')),
      partialExecution: given('partialExecution'),
      maxToolRounds: given('maxToolRounds'),
      maxConcurrentRequests: given('maxConcurrentRequests'),
      maxQueuedRequests: given('maxQueuedRequests'),
      playground: given('playground'),
      forwardOtherEndpoints: given('forwardOtherEndpoints'),
    }),
    upstream: defined({
      baseUrl: upstreams === undefined ? undefined : upstreams.length === 1 ? upstreams[0] : upstreams,
      model: given('model'),
      apiKey: given('upstreamApiKey'),
      conversationAffinity: given('conversationAffinity'),
      continuousUsage: given('continuousUsage'),
    }),
  };
  const plugins = given('plugins');
  // It names what the --tool modules may read; alone it would be a setting silently ignored. A
  // command-line mistake, told before the config file is read, as commander's own are.
  if (given('toolReadPath') !== undefined && given('tool') === undefined) {
    command.error('--tool-read-path applies to the modules given with --tool (a config file names readOnlyPaths per toolModules entry)');
  }
  const file = opts.config ? readConfigFile(opts.config) : {};
  // The simulator runs only without an upstream: beside one, these were ignored without a word, and
  // `--sim-profile mistral-7b-h100` seemed to time a real server. A file may keep both (README sample).
  const simOption = (['simProfile', 'simScenarios'] as const).find((key) => given(key) !== undefined);
  if (simOption !== undefined && (upstreams ?? file.gateway?.upstream?.baseUrl) !== undefined) {
    const flag = simOption === 'simProfile' ? '--sim-profile' : '--sim-scenarios';
    command.error(`${flag} sets up the embedded simulator, which does not run with an upstream (${upstreams ? '--upstream' : `gateway.upstream.baseUrl in ${opts.config}`}): drop one of them`);
  }
  const options = {
    gateway: { ...file.gateway, ...flags.gateway, upstream: { ...file.gateway?.upstream, ...flags.upstream } },
    sim: { ...file.sim, ...defined({ profile: given('simProfile'), scenarioDirs: given('simScenarios') && pathList(given('simScenarios')!).map((dir) => resolve(dir)) }) },
    sandbox: { ...file.sandbox, ...defined({ python: given('python') }) },
    plugins: plugins ?? file.plugins,
    runtimes: file.runtimes,
    toolModules: toolModules(given('tool'))?.map((module) => ({ module, readOnlyPaths: pathList(given('toolReadPath') ?? []) })) ?? file.toolModules,
  };
  const refused = refusedOptionValue(options.gateway, command);
  if (refused !== undefined) command.error(refused);
  const refusedInFile = opts.config === undefined ? undefined : refusedFileValue(options.gateway, opts.config);
  if (refusedInFile !== undefined) throw new GatewayConfigError(refusedInFile);
  const shutdownGrace = given('shutdownGrace') ?? file.shutdownGraceSeconds ?? opts.shutdownGrace;
  ignoreClosedStdout();
  const logger = pino({ level: given('logLevel') ?? file.logLevel ?? opts.logLevel });
  // A promise a hook of an inline tool (or a thread's own code) let go of, rejected: Node's default
  // ends the process, every request in flight with it. It is that tool's bug, logged; the gateway goes on.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection (a tool or hook that did not await a promise); the gateway goes on'));
  guardProcessExit(logger);
  // Before start-up, which may wait up to toolModuleLoadSeconds on a tool module: a SIGTERM then
  // ended the process by Node's default, without a word and without closing what had started.
  const signals = stopOnSignals(shutdownGrace);
  const conveyor = await startConveyor({
    ...options,
    ...(file.toolModuleLoadSeconds !== undefined ? { toolModuleLoadMs: file.toolModuleLoadSeconds * 1000 } : {}),
    logger,
  });
  // Handed over before the banner: it waits up to 2 s on the upstream's readiness while the
  // gateway already serves, and a SIGTERM then (an orchestrator's rollout) must get its grace.
  if (signals.started(conveyor)) return;
  await printBanner(conveyor, options.sim, signals.stopping);
}

/**
 * SIGTERM/SIGINT: stop listening, let requests in flight finish for `shutdownGrace` seconds; a
 * second signal cuts them. During start-up the first signal stops the gateway as soon as it has
 * started (nothing is in flight yet), and a second one ends the process at once. `started` hands
 * over the gateway, and answers whether a signal came first (it is closing, print no banner);
 * `stopping` answers whether a signal has come.
 */
function stopOnSignals(shutdownGrace: number): { started: (conveyor: ConveyorHandle) => boolean; stopping: () => boolean } {
  let conveyor: ConveyorHandle | undefined;
  let closing = false;
  const close = (graceSeconds: number) =>
    conveyor!
      .close({ graceMs: graceSeconds * 1000 })
      .then(() => closeUpstreamPools())
      .then(() => exitProcess(0), () => exitProcess(1));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (conveyor === undefined) {
        if (closing) {
          console.log(`${signal} again: stopping now, during start-up`);
          exitProcess(1);
        }
        closing = true;
        console.log(`\n${signal} during start-up: stopping once it is done (${signal} again to stop now)…`);
        return;
      }
      if (closing) {
        // The grace ends now: what still runs is cut, its clients told so (gateway_shutting_down),
        // and their access lines written; a process that still hangs after that is stopped anyway.
        console.log(`${signal} again: cutting the requests still running…`);
        void conveyor.close();
        setTimeout(() => exitProcess(1), FORCED_EXIT_MS).unref();
        return;
      }
      closing = true;
      console.log(`\nshutting down: requests in flight have ${shutdownGrace} s to finish (${signal} again to stop now)…`);
      void close(shutdownGrace);
    });
  }
  return {
    started(handle) {
      conveyor = handle;
      if (closing) void close(0);
      return closing;
    },
    stopping: () => closing,
  };
}

/** `value` without its undefined fields, so that spreading it over a file's section keeps the file's. */
function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Read as the command line is (from CONVEYOR_PLUGINS too): a mistake in it is a usage error, exit 2. */
function parsePluginsOption(text: string): BuiltinPluginsConfigInput {
  let json: unknown;
  try {
    json = JSON.parse(text);
    return builtinPluginsConfigSchema.parse(json);
  } catch (err) {
    if (err instanceof ZodError) throw new InvalidArgumentError(describeConfigIssues(err, builtinPluginsConfigSchema, json));
    // JSON.parse's words alone ("Expected property name…") did not say the value must be JSON,
    // which a shell's quoting (or a JavaScript habit) most often breaks.
    throw new InvalidArgumentError(`not JSON (${(err as Error).message}): keys and strings go in double quotes, the whole in single quotes, e.g. '{"python":false}'`);
  }
}
