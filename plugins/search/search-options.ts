import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { moduleUrlSettings } from '../module-url-settings.ts';
import { HttpSearchBackend, type HttpSearchBackendOptions } from './http-search-backend.ts';
import type { SearchBackend } from './search-backend.ts';
import { openSearchIndex } from './sqlite-search-index.ts';

/** Where `npm run build:search-index` writes the Python-docs index (git-ignored `dist/`). */
export const DEFAULT_SEARCH_INDEX_FILE = fileURLToPath(new URL('../../dist/search-index/python-docs.sqlite', import.meta.url));

export type SearchPluginOptions = { maxResults?: number } & (
  | { backend: 'sqlite'; /** Default DEFAULT_SEARCH_INDEX_FILE. */ indexFile?: string }
  | ({ backend: 'http' } & HttpSearchBackendOptions)
);

/** Hits per search at most, as `--plugins '{"search":{"maxResults":…}}'` allows (builtin-plugins-config.ts). */
const MAX_RESULTS = 50;
const searchSettingsSchema = z.strictObject({ maxResults: z.number().int().positive().max(MAX_RESULTS).optional() });

/**
 * The options of the default `search` module. Runtimes load a plugin by its module URL, so the
 * URL's query configures it: `?url=<template with {query}>` selects the HTTP backend, else
 * `?index=<file>` (default DEFAULT_SEARCH_INDEX_FILE); `?maxResults=` (default 5). The variables
 * CONVEYOR_SEARCH_URL, CONVEYOR_SEARCH_INDEX and CONVEYOR_SEARCH_MAX_RESULTS fill what the query
 * leaves out. A maxResults that is set but not valid throws a GatewayConfigError that names it.
 */
export function searchModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): SearchPluginOptions {
  const query = new URL(moduleUrl).searchParams;
  // Checked, as the database's and http_get's are: taken as unset, `CONVEYOR_SEARCH_MAX_RESULTS=ten` searched for 5 without a word.
  const common = moduleUrlSettings('search', moduleUrl, env, searchSettingsSchema, {
    maxResults: { param: 'maxResults', variable: 'CONVEYOR_SEARCH_MAX_RESULTS', kind: 'integer', rule: `a whole number from 1 to ${MAX_RESULTS}` },
  });
  const url = query.get('url') ?? env['CONVEYOR_SEARCH_URL'];
  if (url) return { ...common, backend: 'http', urlTemplate: url };
  return { ...common, backend: 'sqlite', indexFile: query.get('index') || env['CONVEYOR_SEARCH_INDEX'] || DEFAULT_SEARCH_INDEX_FILE };
}

/**
 * The backend for `options`, made on first use, so that importing the plugin never touches the
 * disk or network; a missing index is reported on each call (it may be built meanwhile).
 */
export function lazySearchBackend(options: SearchPluginOptions): () => SearchBackend {
  let backend: SearchBackend | undefined;
  return () => {
    if (backend) return backend;
    if (options.backend === 'http') return (backend = new HttpSearchBackend(options));
    const file = options.indexFile ?? DEFAULT_SEARCH_INDEX_FILE;
    try {
      return (backend = openSearchIndex(file));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_CANTOPEN') throw new Error(`no search index at ${file}: build it with \`npm run build:search-index\``);
      throw err;
    }
  };
}
