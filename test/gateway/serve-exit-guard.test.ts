import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { eventually } from '../support/conveyor-fixture.ts';
import { servedConveyors } from '../support/serve-process.ts';

const EXITING_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/exiting-calculator-plugin.ts', import.meta.url));
const { serve } = servedConveyors();

describe("conveyor serve with an inline plugin that calls process.exit", () => {
  it.each(['onLoad', 'onEnd'])('in %s: the call fails saying so, the attempt is logged, and the gateway serves on', async (hook) => {
    const { proc, url, logLines } = await serve(['--sim-profile', 'fast-test', '--plugins', '{"python":false}', '--tool', `${EXITING_PLUGIN}?in=${hook}`]);
    const ask = () =>
      fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mistral-7b-instruct-sim', max_tool_rounds: 1, messages: [{ role: 'user', content: 'What is 200*701?' }] }),
      }).then((res) => res.json() as Promise<{ conveyor: { messages: Array<{ role: string; content: string }> } }>);
    const observation = (await ask()).conveyor.messages.find((m) => m.role === 'tool')!.content;
    expect(observation).toContain(hook === 'onLoad' ? 'calculator onLoad failed: process.exit(0) was called by code running in the gateway' : 'calculator failed: process.exit(3) was called by code running in the gateway');
    await eventually(() => logLines.some((l) => (l as { msg?: string }).msg?.startsWith('process.exit refused')), 'the attempt is logged');
    expect(logLines.find((l) => (l as { msg?: string }).msg?.startsWith('process.exit refused'))).toMatchObject({ level: 50, stack: expect.stringContaining('exiting-calculator-plugin.ts') });
    // Still there, for the next request too.
    expect(proc.exitCode).toBeNull();
    expect((await ask()).conveyor.messages.some((m) => m.role === 'tool')).toBe(true);
    expect((await fetch(`${url.replace(/\/v1$/, '')}/health`)).status).toBe(200);
  }, 60_000);
});
