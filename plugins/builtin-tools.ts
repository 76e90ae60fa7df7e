import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PythonSandbox } from '../sandbox/python-sandbox.ts';
import type { RuntimePools } from '../sandbox/runtimes/runtime-pools.ts';
import { checkBuiltinDataFiles } from './builtin-data-files.ts';
import { builtinPluginsConfigSchema, type BuiltinPluginsConfigInput } from './builtin-plugins-config.ts';
import { ensureSampleDatabase } from './database/sample-database.ts';
import calculator from './calculator/calculator-plugin.ts';
import database from './database/database-plugin.ts';
import format from './format/format-plugin.ts';
import { createHttpGetPlugin } from './http-get/http-get-plugin.ts';
import { inlineTool } from './kit/inline-tool.ts';
import { toolFromPlugin } from './kit/tool-from-plugin.ts';
import { createPlanTool } from './plan/plan-plugin.ts';
import type { ToolPlugin } from './plugin-types.ts';
import { createPythonPlugin } from './python/python-plugin.ts';
import { sampleDocsSource } from './search/build-search-index.ts';
import { buildSearchIndex } from './search/search-index-builder.ts';
import search, { createSearchPlugin } from './search/search-plugin.ts';
import { DEFAULT_SEARCH_INDEX_FILE } from './search/search-options.ts';
import localNews from './validate/validate-plugin.ts';

/** The sample-pages index the gateway builds for itself when the full one was never built. */
const SAMPLE_SEARCH_INDEX_FILE = fileURLToPath(new URL('../dist/search-index/sample-docs.sqlite', import.meta.url));

export interface BuiltinTools {
  tools: Map<string, ToolPlugin>;
  /** What each tool runs on (GET /health): corpus, database file, runtime. */
  describe: Record<string, Record<string, unknown>>;
}

const moduleUrl = (relative: string, query: Record<string, string | number | boolean | undefined> = {}): URL => {
  const url = new URL(relative, import.meta.url);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
  return url;
};

/**
 * The gateway's built-in tools, each made from its plugin definition in the runtime it declares.
 * Plugins that run outside the gateway's loop are loaded by module URL in their worker or
 * sandboxed process, so their settings travel in the URL's query (the sandbox passes no
 * environment). Starts the process runtime's warm spares for them.
 */
export async function createBuiltinTools(options: { config?: BuiltinPluginsConfigInput; pools: RuntimePools; sandbox?: PythonSandbox }): Promise<BuiltinTools> {
  const config = builtinPluginsConfigSchema.parse(options.config ?? {});
  // Before any tool is made: a file a setting names is refused now, not on every call.
  const files = checkBuiltinDataFiles(config);
  const { pools } = options;
  const tools = new Map<string, ToolPlugin>();
  const describe: BuiltinTools['describe'] = {};
  const add = (tool: ToolPlugin & { runtime?: string; warm?: () => void }, facts: Record<string, unknown> = {}): void => {
    tools.set(tool.name, tool);
    describe[tool.name] = { runtime: tool.runtime ?? 'inline', ...facts };
    tool.warm?.();
  };

  if (config.python && options.sandbox) add(createPythonPlugin(options.sandbox), { runtime: 'python sandbox (fork server)' });

  if (config.search !== false) {
    const { url, maxResults } = config.search;
    if (url) {
      // An HTTP search is plain I/O: inline, as its definition says (in a worker pool the early
      // search's promise would stay in whichever worker ran onPiece).
      add(inlineTool(createSearchPlugin({ backend: 'http', urlTemplate: url, ...(maxResults ? { maxResults } : {}) })), { backend: url });
    } else {
      const index = files.searchIndex ?? (await defaultSearchIndex());
      add(toolFromPlugin(search, { moduleUrl: moduleUrl('./search/search-plugin.ts', { index, maxResults }), pools }), { index });
    }
  }

  if (config.calculator) add(toolFromPlugin(calculator, { moduleUrl: moduleUrl('./calculator/calculator-plugin.ts'), pools }));

  if (config.database !== false) {
    const file = files.databaseFile ?? path.resolve(ensureSampleDatabase());
    const { maxRows, timeLimitMs, maxChars } = config.database;
    add(
      toolFromPlugin(database, {
        moduleUrl: moduleUrl('./database/database-plugin.ts', { file, maxRows, timeLimitMs, maxChars }),
        pools,
        readOnlyPaths: [path.dirname(file)],
      }),
      { file },
    );
  }

  if (config.local_news) add(inlineTool(localNews));
  if (config.format) add(inlineTool(format));
  if (config.http_get !== false) add(inlineTool(createHttpGetPlugin(config.http_get)), { allowPrivateNetwork: config.http_get.allowPrivateNetwork ?? false });
  // Last, so that its steps can name every tool above; it looks them up per call.
  if (config.plan) add(inlineTool(createPlanTool({ tools: (name) => tools.get(name), ...config.plan })));
  return { tools, describe };
}

/** The built python-docs index where `npm run build:search-index` ran, else the sample pages (built here, ~0.3 s). */
export async function defaultSearchIndex(): Promise<string> {
  if (existsSync(DEFAULT_SEARCH_INDEX_FILE)) return DEFAULT_SEARCH_INDEX_FILE;
  if (!existsSync(SAMPLE_SEARCH_INDEX_FILE)) await buildSearchIndex({ out: SAMPLE_SEARCH_INDEX_FILE, sources: [sampleDocsSource()] });
  return SAMPLE_SEARCH_INDEX_FILE;
}
