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
 * CONVEYOR_HTTP_GET_ALLOW_PRIVATE=1, _MAX_BYTES, _TIMEOUT_MS, _MAX_REDIRECTS.
 */
export function httpGetModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): HttpGetOptions {
  const query = new URL(moduleUrl).searchParams;
  const integer = (param: string, variable: string, min = 1) => {
    const text = query.get(param) ?? env[variable];
    const value = Number(text);
    return text && Number.isInteger(value) && value >= min ? value : undefined;
  };
  return {
    allowPrivateNetwork: (query.get('allowPrivateNetwork') ?? env['CONVEYOR_HTTP_GET_ALLOW_PRIVATE']) === '1',
    maxBytes: integer('maxBytes', 'CONVEYOR_HTTP_GET_MAX_BYTES'),
    timeoutMs: integer('timeoutMs', 'CONVEYOR_HTTP_GET_TIMEOUT_MS'),
    maxRedirects: integer('maxRedirects', 'CONVEYOR_HTTP_GET_MAX_REDIRECTS', 0),
  };
}
