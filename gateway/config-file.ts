import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { GatewayConfigError } from '../core/errors.ts';
import { MAX_TIMER_MS, MAX_TIMER_MS_RULE } from '../core/max-timer-ms.ts';
import { builtinPluginsConfigSchema } from '../plugins/builtin-plugins-config.ts';
import { pythonSandboxOptionsSchema } from '../sandbox/python-sandbox-options.ts';
import { gatewayConfigSectionSchema } from './config.ts';
import { describeConfigIssues } from './config-issues.ts';
import { REASONING_PARSERS } from '../sim/reasoning-split.ts';
import { TOOL_CALL_PARSERS } from '../sim/sim-server.ts';
import type { ConveyorOptions } from './start-conveyor.ts';

const positiveInt = z.number().int().positive();
const count = z.number().int().min(0);
const timerMs = positiveInt.max(MAX_TIMER_MS, `must be ${MAX_TIMER_MS_RULE}`);

/** The embedded simulator's settings a file may set (sim/sim-server.ts SimOptions). */
const simSectionSchema = z
  .strictObject({
    /** A shipped profile's name or a profile JSON file. */
    profile: z.string().min(1),
    scenarioDirs: z.array(z.string().min(1)),
    modelName: z.string().min(1),
    prefixCacheTokens: count,
    maxNumBatchedTokens: positiveInt,
    toolCallParser: z.enum(TOOL_CALL_PARSERS),
    reasoningParser: z.enum(REASONING_PARSERS),
    enablePromptTokensDetails: z.boolean(),
  })
  .partial();

/** Sizes of the plugin runtime pools (sandbox/runtimes: thread-pool, process-pool, isolate-hosts). */
const runtimesSectionSchema = z
  .strictObject({
    thread: z.strictObject({ maxThreads: positiveInt, maxQueue: count, maxOldGenerationSizeMb: positiveInt, idleTimeoutMs: timerMs }).partial(),
    process: z.strictObject({ maxProcesses: positiveInt, maxQueue: count, sparesPerPlugin: count, maxSpares: count, maxIdlePerPlugin: count, idleMs: timerMs, startupTimeoutMs: timerMs }).partial(),
    isolate: z.strictObject({ maxCalls: positiveInt, maxQueue: count, heapMb: positiveInt, dataMb: positiveInt }).partial(),
  })
  .partial();

/**
 * A `conveyor serve --config FILE` file: JSON with the sections of startConveyor's options, plus
 * the settings of the serve command itself. Every key is checked; a misspelt one is an error.
 */
export const conveyorConfigFileSchema = z
  .strictObject({
    gateway: gatewayConfigSectionSchema,
    sim: simSectionSchema,
    sandbox: pythonSandboxOptionsSchema,
    plugins: builtinPluginsConfigSchema,
    runtimes: runtimesSectionSchema,
    toolModules: z.array(z.union([z.string().min(1), z.strictObject({ module: z.string().min(1), readOnlyPaths: z.array(z.string().min(1)).optional() })])),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /** Past Node's longest timer (MAX_TIMER_MS) the grace's timer fired at once, cutting every request on the first SIGTERM. */
    shutdownGraceSeconds: z
      .number()
      .min(0)
      .max(Math.floor(MAX_TIMER_MS / 1000), `must be at most ${Math.floor(MAX_TIMER_MS / 1000)} s (about 24.8 days, the longest timer Node keeps; past it the timer fires at once)`),
    /** How long each tool module may take to import (ConveyorOptions.toolModuleLoadMs, in seconds). */
    toolModuleLoadSeconds: z.number().positive().max(86_400),
  })
  .partial();

export type ConveyorConfigFile = Pick<ConveyorOptions, 'gateway' | 'sim' | 'sandbox' | 'plugins' | 'runtimes' | 'toolModules'> & {
  logLevel?: z.infer<typeof conveyorConfigFileSchema>['logLevel'];
  shutdownGraceSeconds?: number;
  toolModuleLoadSeconds?: number;
};

/**
 * Reads and checks a config file. What it holds goes on as written (defaults are filled in later,
 * in one place each), except that relative paths are made relative to the file's own folder, not
 * the working directory, so a file means the same wherever the gateway is started from.
 */
export function readConfigFile(path: string): ConveyorConfigFile {
  let text: string;
  let raw: unknown;
  try {
    // A byte-order mark (Windows editors save one) is no part of the JSON.
    text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
  } catch (err) {
    // Node's "ENOENT: …, open 'conveyor.json'" left out where the file was looked for: under a
    // service manager the working directory is seldom the one the operator has in mind.
    const code = (err as NodeJS.ErrnoException).code;
    const where = isAbsolute(path) ? '' : ` ${resolve(path)} (a relative path is taken from the working directory, ${process.cwd()})`;
    const problem = code === 'ENOENT' ? `no such file${where}` : code === 'EISDIR' ? 'it is a folder, not a JSON file' : (err as Error).message;
    throw new GatewayConfigError(`config file ${path}: ${problem}`, { cause: err });
  }
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // A conveyor.yaml was answered "Unexpected token 'g'", as if the YAML had a typo in it.
    const other = /\.(ya?ml|toml|ini)$/i.exec(path)?.[1];
    const only = other ? ` (a config file is JSON only; ${other.toUpperCase().replace('YML', 'YAML')} is not read)` : '';
    throw new GatewayConfigError(`config file ${path}: not JSON${only}: ${withLineAndColumn((err as Error).message, text)}`, { cause: err });
  }
  const checked = conveyorConfigFileSchema.safeParse(raw);
  if (!checked.success) throw new GatewayConfigError(`config file ${path}: ${describeConfigIssues(checked.error, conveyorConfigFileSchema, raw)}`);
  return withPathsFrom(dirname(resolve(path)), raw as ConveyorConfigFile);
}

/** Node 20's JSON.parse gives a position only ("… in JSON at position 42"); an editor goes by line and column. */
function withLineAndColumn(message: string, text: string): string {
  const at = /at position (\d+)(?! \(line)/.exec(message);
  if (!at) return message;
  const before = text.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${message} (line ${line} column ${column})`;
}

function withPathsFrom(folder: string, file: ConveyorConfigFile): ConveyorConfigFile {
  const at = (p: string) => (isAbsolute(p) || p.startsWith('file:') ? p : resolve(folder, p));
  // A profile is a shipped name unless it names a file, by sim/timing-profile.ts's rule (a slash, or
  // .json): `profiles/my-gpu` was read from the working directory, though it is a path.
  const ref = file.sim?.profile;
  const profile = typeof ref === 'string' && (ref.includes('/') || ref.includes('\\') || ref.endsWith('.json')) ? at(ref) : ref;
  const plugins = file.plugins;
  const baseUrl = file.gateway?.upstream?.baseUrl;
  return {
    ...file,
    ...(baseUrl !== undefined
      ? { gateway: { ...file.gateway, upstream: { ...file.gateway!.upstream, baseUrl: typeof baseUrl === 'string' ? socketFrom(folder, baseUrl) : baseUrl.map((url) => socketFrom(folder, url)) } } }
      : {}),
    ...(file.toolModules
      ? { toolModules: file.toolModules.map((m) => (typeof m === 'string' ? at(m) : { module: at(m.module), ...(m.readOnlyPaths ? { readOnlyPaths: m.readOnlyPaths.map(at) } : {}) })) }
      : {}),
    ...(file.sim ? { sim: { ...file.sim, ...(profile !== undefined ? { profile } : {}), ...(file.sim.scenarioDirs ? { scenarioDirs: file.sim.scenarioDirs.map(at) } : {}) } } : {}),
    ...(file.sandbox?.python?.includes('/') ? { sandbox: { ...file.sandbox, python: at(file.sandbox.python) } } : {}),
    ...(plugins
      ? {
          plugins: {
            ...plugins,
            ...(plugins.database && plugins.database.file ? { database: { ...plugins.database, file: at(plugins.database.file) } } : {}),
            ...(plugins.search && plugins.search.index ? { search: { ...plugins.search, index: at(plugins.search.index) } } : {}),
          },
        }
      : {}),
  };
}

/**
 * A Unix socket upstream (`unix:vllm.sock:/v1`) whose socket path is relative, made relative to the
 * file's folder like every other path in it: undici connected to it from the working directory, so
 * the file meant another socket depending on where the gateway was started. Other URLs as written.
 */
function socketFrom(folder: string, url: string): string {
  if (!url.startsWith('unix:')) return url;
  const rest = url.slice('unix:'.length);
  const colon = rest.indexOf(':');
  const socket = colon < 0 ? rest : rest.slice(0, colon);
  if (socket === '' || isAbsolute(socket)) return url;
  const path = resolve(folder, socket);
  // The socket's path ends at its first colon (nginx's form): a folder with one cannot be written so.
  if (path.includes(':')) throw new GatewayConfigError(`gateway.upstream.baseUrl "${url}": the socket's path from the config file's folder, ${path}, holds a colon, which a unix: URL cannot hold; write the socket's path with no colon in it`);
  return `unix:${path}${colon < 0 ? '' : rest.slice(colon)}`;
}
