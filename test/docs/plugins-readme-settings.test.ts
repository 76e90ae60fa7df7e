import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtinPluginsConfigSchema } from '../../plugins/builtin-plugins-config.ts';

// plugins/README.md gives each built-in tool a section, and a tool that takes settings through
// `--plugins` (or a config file's `plugins`) is configured from there. The plan tool's maxSteps and
// maxParallelSteps, and the search tool's settings in that form, were in no README, so an operator
// could not learn that `--plugins '{"plan":{"maxSteps":40}}'` exists.
const README = readFileSync(new URL('../../plugins/README.md', import.meta.url), 'utf8');

/** The section `### <tool>` of the README, up to the next heading. */
function section(tool: string): string {
  return new RegExp(`\\n### ${tool}\\n([\\s\\S]*?)(?=\\n#{2,3} |$)`).exec(README)?.[1] ?? '';
}

/** Each built-in tool that takes an object of settings, with that object's keys. */
function toolsWithSettings(): Array<[string, string[]]> {
  const found: Array<[string, string[]]> = [];
  for (const [tool, field] of Object.entries(builtinPluginsConfigSchema.shape)) {
    const inner = (field as z.ZodDefault<z.ZodType>).unwrap();
    if (!(inner instanceof z.ZodUnion)) continue;
    const settings = inner.options.find((o): o is z.ZodObject => o instanceof z.ZodObject);
    if (settings) found.push([tool, Object.keys(settings.shape)]);
  }
  return found;
}

describe('plugins/README.md, each built-in tool\'s --plugins settings', () => {
  const tools = toolsWithSettings();

  it('finds the tools that take settings', () => {
    expect(tools.map(([tool]) => tool).sort()).toEqual(['database', 'http_get', 'plan', 'search']);
  });

  it.each(tools)('%s: its section shows --plugins with every setting', (tool, keys) => {
    const text = section(tool);
    expect(text, `### ${tool}`).not.toBe('');
    expect(text).toContain(`--plugins '{"${tool}":{`);
    for (const key of keys) expect(text, key).toContain(`"${key}":`);
  });
});
