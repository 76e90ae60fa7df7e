import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineCommandPlugin } from '../define-command-plugin.ts';

/**
 * A plugin in another language: echo_plugin.py, beside this module, speaks the plugin protocol on
 * fd 3 (upper-cases `text`, rejects the value "bad" while the call is decoded). This module tells
 * the gateway the tool's name, schema, piece kind and limits, and the command that runs it, so it
 * loads like any plugin module: `npm start -- --tool plugins/kit/examples/echo-python-plugin.ts`.
 */
export default defineCommandPlugin({
  name: 'echo_py',
  description: 'Upper-cases a text; rejects the value "bad" while it is decoded',
  parameters: z.object({ text: z.string() }),
  consumes: 'field',
  limits: { timeoutMs: 10_000, memoryMb: 128 },
  // By absolute path: the sandbox runs the program in an empty working directory, and grants the script's folder read-only.
  command: ['/usr/bin/python3', fileURLToPath(new URL('./echo_plugin.py', import.meta.url))],
});
