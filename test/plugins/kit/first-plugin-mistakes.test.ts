import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, inlineTool, runScriptedCall } from '../../../plugins/kit/index.ts';
import { good } from './weather-definition.ts';

// Mistakes of a first plugin, written from plugins/README.md's quick start: each message must
// name the problem and the fix, not only that a value is wrong.
const problem = (definition: Record<string, unknown>): string => {
  try {
    definePlugin(definition as never);
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('a first plugin\'s mistakes name their fix', () => {
  it('forgotten consumes says which values there are and what each means, not "got undefined"', () => {
    const { consumes: _, ...noConsumes } = good;
    const message = problem(noConsumes);
    expect(message).toMatch(/^plugin weather: consumes is missing/);
    expect(message).toContain("'call' for none (onEnd alone");
    expect(message).not.toContain('got undefined');
  });

  it('onEnd written beside name and parameters says it goes inside hooks', () => {
    const { hooks, ...rest } = good;
    expect(problem({ ...rest, onEnd: hooks.onEnd })).toBe("plugin weather: unknown key 'onEnd': hooks go inside hooks (hooks: { onEnd: … })");
    expect(problem({ ...good, onPiece: () => undefined })).toMatch(/unknown key 'onPiece': hooks go inside hooks/);
  });

  it('onEnd returning { ok, content, data } with a data that is not an object blames data, not ok and content', async () => {
    const plugin = definePlugin({ ...good, hooks: { onEnd: () => ({ ok: true, content: 'sunny', data: 'json' }) as never } });
    const run = await runScriptedCall(inlineTool(plugin), { args: { city: 'Paris' } });
    expect(run.result).toEqual({ ok: false, content: 'error: weather\'s onEnd returned { ok, content, data } with data "json"; data must be an object (or left out)' });
  });

  it('onEnd returning something else still says what it got and what is allowed', async () => {
    const plugin = definePlugin({ ...good, hooks: { onEnd: () => 42 as never } });
    const run = await runScriptedCall(inlineTool(plugin), { args: { city: 'Paris' } });
    expect(run.result?.content).toBe("error: weather's onEnd returned 42, not a string or { ok, content }");
  });

  it('onEnd returning { ok, content } of the wrong types says which field is wrong', async () => {
    const plugin = definePlugin({ ...good, hooks: { onEnd: () => ({ ok: 'yes', content: 5 }) as never } });
    const run = await runScriptedCall(inlineTool(plugin), { args: { city: 'Paris' } });
    expect(run.result?.content).toBe('error: weather\'s onEnd returned { ok, content } with ok "yes" (must be a boolean) and content 5 (must be a string)');
  });

  // The message said only that lineField was needed or wrong, so the author had to read the schema back to find a name that works.
  it("a line plugin's missing or wrong lineField names the string fields it may be, or says there is none", () => {
    const line = { ...good, consumes: 'line' };
    expect(problem({ ...line, parameters: z.object({ city: z.string(), note: z.string(), days: z.number() }) })).toBe(
      'plugin weather: consumes "line" needs lineField, the string argument whose lines are the pieces (it can be left out only when the arguments have one string field; its string fields: "city", "note")',
    );
    expect(problem({ ...line, parameters: z.object({ days: z.number() }) })).toMatch(/; parameters has no string field\)$/);
    expect(problem({ ...line, lineField: 'days', parameters: z.object({ city: z.string(), days: z.number() }) })).toBe(
      'plugin weather: lineField "days" is not a string field of parameters (its string fields: "city")',
    );
  });

  // A nullable string is a string to its author, and the message said there was none: null has no
  // lines to feed, so it is refused, and now the message says that is why.
  it('a line plugin whose only text field is nullable or optional-nullable is told why that field does not count', () => {
    const line = { ...good, consumes: 'line' };
    expect(problem({ ...line, parameters: z.object({ code: z.string().nullable() }) })).toBe(
      'plugin weather: consumes "line" needs lineField, the string argument whose lines are the pieces (it can be left out only when the arguments have one string field; parameters has no string field: "code" may also be null, which has no lines: make it z.string())',
    );
    expect(problem({ ...line, lineField: 'code', parameters: z.object({ city: z.string(), code: z.string().nullish() }) })).toBe(
      'plugin weather: lineField "code" is not a string field of parameters (its string fields: "city"; "code" may also be null, which has no lines: make it z.string())',
    );
  });
});
