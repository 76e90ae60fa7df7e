import { httpGetSettingsSchema, MAX_TOOL_TIME_MS } from '../builtin-plugins-config.ts';
import { moduleUrlSettings } from '../module-url-settings.ts';

export interface HttpGetOptions {
  /** Body bytes read at most; the rest is cut (and said so). Default 512 KiB. */
  maxBytes?: number;
  /** Connect, headers and body each, and the whole fetch. Default 10 000 ms. */
  timeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Allow loopback and private addresses (tests, intranet deployments). Default false. */
  allowPrivateNetwork?: boolean;
  /** Default "conveyor-http-get/0.1". */
  userAgent?: string;
}

/** The options with their defaults filled in. */
export function resolveHttpGetOptions(options: HttpGetOptions): Required<HttpGetOptions> {
  return {
    maxBytes: options.maxBytes ?? 512 * 1024,
    timeoutMs: options.timeoutMs ?? 10_000,
    maxRedirects: options.maxRedirects ?? 5,
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    userAgent: options.userAgent ?? 'conveyor-http-get/0.1',
  };
}

/**
 * The options of the default `http_get` module, from its URL query (runtimes load a plugin by
 * URL): `?allowPrivateNetwork=1&maxBytes=…&timeoutMs=…&maxRedirects=…`, or the variables
 * CONVEYOR_HTTP_GET_ALLOW_PRIVATE=1, _MAX_BYTES, _TIMEOUT_MS, _MAX_REDIRECTS. A value that is set
 * but not valid throws a GatewayConfigError that names it.
 */
export function httpGetModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): HttpGetOptions {
  return moduleUrlSettings('http_get', moduleUrl, env, httpGetSettingsSchema, {
    allowPrivateNetwork: { param: 'allowPrivateNetwork', variable: 'CONVEYOR_HTTP_GET_ALLOW_PRIVATE', kind: 'flag', rule: '1 or 0 (true or false)' },
    maxBytes: { param: 'maxBytes', variable: 'CONVEYOR_HTTP_GET_MAX_BYTES', kind: 'integer', rule: 'a whole number, at least 1' },
    timeoutMs: { param: 'timeoutMs', variable: 'CONVEYOR_HTTP_GET_TIMEOUT_MS', kind: 'integer', rule: `a whole number of milliseconds from 1 to ${MAX_TOOL_TIME_MS}` },
    maxRedirects: { param: 'maxRedirects', variable: 'CONVEYOR_HTTP_GET_MAX_REDIRECTS', kind: 'integer', rule: 'a whole number, at least 0' },
  });
}
