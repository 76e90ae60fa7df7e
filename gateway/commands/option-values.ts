import { InvalidArgumentError, type Command } from 'commander';
import { shippedProfileNames } from '../../sim/timing-profile.ts';
import { ZodError } from 'zod';
import { gatewayConfigSchema, type GatewayConfigInput } from '../config.ts';
import { conveyorConfigFileSchema } from '../config-file.ts';
import { describeConfigIssues } from '../config-issues.ts';

/**
 * A list option's parser (`--tool a.ts b.ts`, `--tool a.ts,b.ts`): each value kept as given (the
 * command splits the commas), a value that names nothing refused. Read as "no modules", `--tool ''`
 * (a variable of a unit file that expanded to nothing) started the gateway without them, silently.
 */
export function listOf(what: string): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => {
    if (value.split(',').every((item) => item.trim() === '')) throw new InvalidArgumentError(`expected ${what}, not an empty value`);
    return [...(previous ?? []), value];
  };
}

/**
 * A one-value option's parser that refuses an empty value (`--host "$HOST"` with HOST unset), as
 * `--api-key` does: read as given, `--host ''` listened on every address, `--python ''` ended in a
 * stack trace, `--model ''` named every answer "", `--config ''` started without the file. An
 * empty environment variable never gets here: the CLI reads it as unset.
 */
export function nonEmpty(what: string): (value: string) => string {
  return (value) => {
    if (value.trim() === '') throw new InvalidArgumentError(`expected ${what}, not an empty value (an unset variable?)`);
    return value;
  };
}

/**
 * `--config`: one file. Given twice, the first was dropped without a word, though a reader of
 * `--config base.json --config site.json` expects the two merged (as compose files are).
 */
export function configFile(value: string, previous: string | undefined): string {
  if (previous !== undefined) throw new InvalidArgumentError(`a second config file (after ${previous}): one --config only; files are not merged`);
  return nonEmpty('a config file')(value);
}

/**
 * `--sim-profile`: a shipped profile's name, or a path to a profile file (anything with a slash or
 * ending in .json, as sim/timing-profile.ts reads it). A name that is neither is a usage error,
 * told at once; a file that is missing or not a profile is a file the command could not use (1).
 */
export function simProfile(value: string): string {
  const path = value.includes('/') || value.includes('\\') || value.endsWith('.json');
  const shipped = shippedProfileNames();
  if (!path && !shipped.includes(value)) throw new InvalidArgumentError(`not a shipped profile (${shipped.join(', ')}), nor a path to a profile JSON file`);
  return value;
}

/** Where each serve option puts its value in the gateway's configuration, by the option's attribute name. */
const SETTING_OF_OPTION: Record<string, readonly string[]> = {
  host: ['host'],
  port: ['port'],
  apiKey: ['apiKeys'],
  allowedHost: ['allowedHosts'],
  allowedOrigin: ['allowedOrigins'],
  partialExecution: ['partialExecution'],
  maxToolRounds: ['maxToolRounds'],
  maxConcurrentRequests: ['maxConcurrentRequests'],
  maxQueuedRequests: ['maxQueuedRequests'],
  playground: ['playground'],
  forwardOtherEndpoints: ['forwardOtherEndpoints'],
  upstream: ['upstream', 'baseUrl'],
  model: ['upstream', 'model'],
  upstreamApiKey: ['upstream', 'apiKey'],
  conversationAffinity: ['upstream', 'conversationAffinity'],
  continuousUsage: ['upstream', 'continuousUsage'],
};

/** Checked only: the embedded simulator's URL, which the gateway gets once the simulator runs. */
const SIM_PLACEHOLDER = 'http://127.0.0.1/v1';

/**
 * The gateway's configuration as the options and the config file make it, checked as startGateway
 * will check it, before anything starts: a value it refuses that an option gave (`--upstream
 * ftp://x`, `--allowed-origin '*'` without a key, `--max-queued-requests` alone) is a wrong command
 * line, exit status 2, as every other refused option value is; the file's own values are left to
 * the start (status 1, README "Exit status"). Returns the line to stop with, or undefined.
 */
export function refusedOptionValue(gateway: GatewaySettings, command: Command): string | undefined {
  const checked = checkedGateway(gateway);
  if (checked.success) return undefined;
  const given = command.options.filter((option) => {
    const source = command.getOptionValueSource(option.attributeName());
    return SETTING_OF_OPTION[option.attributeName()] !== undefined && source !== undefined && source !== 'default';
  });
  for (const issue of checked.error.issues) {
    const option = given.find((o) => SETTING_OF_OPTION[o.attributeName()]!.every((key, i) => issue.path[i] === key));
    if (option === undefined) continue;
    // From its variable, the option was never typed: the line says where the value came from, as commander's own do.
    const from = command.getOptionValueSource(option.attributeName()) === 'env' ? ` (from env ${option.envVar})` : '';
    return `option '${option.flags}'${from}: ${issue.message}`;
  }
  return undefined;
}

/**
 * What the file's values (with the options') make that the gateway refuses though each value alone
 * passed the file's check: a rule across keys (`maxQueuedRequests` without `maxConcurrentRequests`,
 * `allowedOrigins: ["*"]` without keys), said with the file and the key's whole path, as the file's
 * other mistakes are. Returns the message, or undefined.
 */
export function refusedFileValue(gateway: GatewaySettings, file: string): string | undefined {
  const checked = checkedGateway(gateway);
  if (checked.success) return undefined;
  const issues = checked.error.issues.map((issue) => ({ ...issue, path: ['gateway', ...issue.path] }));
  return `config file ${file}: ${describeConfigIssues(new ZodError(issues), conveyorConfigFileSchema)}`;
}

type GatewaySettings = Partial<Omit<GatewayConfigInput, 'upstream'>> & { upstream?: Partial<GatewayConfigInput['upstream']> };

function checkedGateway(gateway: GatewaySettings) {
  return gatewayConfigSchema.safeParse({ ...gateway, upstream: { ...gateway.upstream, baseUrl: gateway.upstream?.baseUrl ?? SIM_PLACEHOLDER } });
}
