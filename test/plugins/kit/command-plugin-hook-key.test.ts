import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineCommandPlugin } from '../../../plugins/kit/index.ts';

// defineCommandPlugin({ …, onEnd }) said "hooks go inside hooks (hooks: { onEnd: … })", and with
// hooks it then said "a plugin with a command has no hooks": each hint sent the author to the other.
// A command plugin's code is its program; the error says so at once.
it("tells a command plugin's author that its program, not a hook, answers the call", () => {
  const definition = {
    name: 'echo_py', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }), consumes: 'field',
    command: ['/usr/bin/python3', '/abs/echo_plugin.py'], onEnd: () => 'x',
  };
  expect(() => defineCommandPlugin(definition as never)).toThrow(
    "plugin echo_py: unknown key 'onEnd': a plugin with a command has no hooks (its program answers each call on fd 3: plugins/README.md \"Other languages\"); a JS plugin is definePlugin({ …, hooks: { onEnd } })",
  );
});
