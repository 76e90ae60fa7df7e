import type { z } from 'zod';
import { definitionProblem } from './check-definition.ts';
import type { PluginDefinition } from './define-plugin.ts';

/**
 * A plugin whose code is a program in another language (Python, Go, a shell script): what the
 * gateway needs to know about the tool (name, description, schema, piece kind, limits) and the
 * command that runs it, in runtime `process`. The program speaks the plugin protocol on fd 3
 * (sandbox/runtimes/plugin-protocol.ts; plugins/README.md "Other languages").
 *
 * @example
 * const definition: CommandPluginDefinition = defineCommandPlugin({
 *   name: 'echo_py', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }),
 *   consumes: 'field', command: ['/usr/bin/python3', '/abs/path/echo_plugin.py'],
 * });
 */
export interface CommandPluginDefinition<S extends z.ZodType = z.ZodType> extends Omit<PluginDefinition<S>, 'hooks' | 'runtime' | 'reuseProcess'> {
  /** Always `process`, the one runtime that runs another program; may be left out. */
  runtime?: 'process';
  /**
   * The program and its arguments, by absolute path (the sandbox runs it in an empty working
   * directory; the folder of each absolute path that exists is granted read-only), e.g.
   * `['/usr/bin/python3', fileURLToPath(new URL('./my_plugin.py', import.meta.url))]`. May be left
   * out when the gateway's code supplies it: `toolFromPlugin(definition, { command, pools })`,
   * whose `command` also replaces this one.
   */
  command?: readonly string[];
}

/**
 * Declares a plugin written in another language: the definition definePlugin takes, with the
 * `command` that runs the plugin instead of `hooks` (definePlugin wants hooks: its plugins are
 * JS). A module whose default export this is loads like any plugin module (`--tool`,
 * `toolModules`); in code, `toolFromPlugin(definition, { pools })`. Throws a TypeError naming what
 * is wrong, as definePlugin does; one with hooks, or a runtime other than `process`, among them.
 *
 * @example
 * // plugins/kit/examples/echo-python-plugin.ts, beside echo_plugin.py
 * export default defineCommandPlugin({
 *   name: 'echo_py',
 *   description: 'Upper-cases a text; rejects the value "bad" while it is decoded',
 *   parameters: z.object({ text: z.string() }),
 *   consumes: 'field',
 *   limits: { timeoutMs: 10_000, memoryMb: 128 },
 *   command: ['/usr/bin/python3', fileURLToPath(new URL('./echo_plugin.py', import.meta.url))],
 * });
 * // gateway setup: const tool = toolFromPlugin(echoPy, { pools });
 */
export function defineCommandPlugin<S extends z.ZodType>(definition: CommandPluginDefinition<S>): CommandPluginDefinition<S> {
  const problem = definitionProblem(definition, 'command');
  if (problem !== undefined) throw new TypeError(`plugin ${typeof definition?.name === 'string' ? definition.name : '(unnamed)'}: ${problem}`);
  return definition;
}

/** Whether `definition` is a plugin in another language (defineCommandPlugin's), not one with JS hooks. */
export function isCommandPlugin(definition: PluginDefinition | CommandPluginDefinition): definition is CommandPluginDefinition {
  return !('hooks' in definition) || definition.hooks === undefined;
}
