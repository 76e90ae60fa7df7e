import type { Dispatcher } from 'undici';
import { upstreamPool } from './upstream-pools.ts';

export interface UpstreamTarget {
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/** Where one endpoint of an upstream lives and how to reach it (shared pool unless overridden). */
export function upstreamTarget(
  options: { baseUrl: string; apiKey?: string | undefined; dispatcher?: Dispatcher | undefined; timeouts: { connectMs: number } },
  endpoint: '/chat/completions' | '/models',
): UpstreamTarget {
  const url = new URL(options.baseUrl);
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  return {
    dispatcher: options.dispatcher ?? upstreamPool(url.origin, options.timeouts.connectMs),
    origin: url.origin,
    // Keeps a query string such as Azure's ?api-version=… on the endpoint.
    path: `${url.pathname.replace(/\/+$/, '')}${endpoint}${url.search}`,
    headers,
  };
}
