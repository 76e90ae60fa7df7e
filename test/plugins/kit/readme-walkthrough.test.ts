import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { servedConveyors } from '../../support/serve-process.ts';

// plugins/README.md's authoring walkthrough, taken from the README itself and done as an author
// does it: the word-count plugin, its scenario, its test, vitest config and tsconfig written into a
// folder of the checkout; the gateway started with the command the README gives and the tool called
// through the `openai` client; the author's test run and type-checked with the README's commands.
// A step of the walkthrough that no longer works fails here, not for the next author who copies it.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = readFileSync(path.join(ROOT, 'plugins/README.md'), 'utf8');

function fromReadme(pattern: RegExp, what: string): string {
  const match = pattern.exec(README);
  if (!match?.[1]) throw new Error(`plugins/README.md no longer has ${what} (${String(pattern)})`);
  return match[1];
}

const pluginSource = fromReadme(/```ts\n(\/\/ my-tools\/word-count-plugin\.ts[\s\S]*?)```/, 'the word-count plugin');
const scenario = fromReadme(/Try it on the simulator[\s\S]*?```json\n([\s\S]*?)```/, 'the scenario of "Try it on the simulator"');
const command = fromReadme(/then `npm start -- ([^`]+)`/, 'the command that runs the walkthrough');
const prompt = fromReadme(/ask model `mistral-7b-instruct-sim` to "([^"]+)"/, 'what to ask the model');
const testSource = fromReadme(/```ts\n(\/\/ my-tools\/word-count\.test\.ts[\s\S]*?)```/, 'the test of "Testing"');
const vitestConfig = fromReadme(/```ts\n\/\/ my-tools\/vitest\.config\.ts\n([\s\S]*?)```/, 'the vitest config of "Your own tests"');
const testCommand = fromReadme(/run `npx (vitest run --config my-tools\/vitest\.config\.ts)`/, 'the command that runs your own tests');
const tsconfig = fromReadme(/`my-tools\/tsconfig\.json` with\n`([^`]+)`/, 'the tsconfig of "Type-check your plugin"');
const tools = (JSON.parse(`{${fromReadme(/with `("tools": \[[^`]+\])`/, "the request's tools")}}`) as { tools: OpenAI.ChatCompletionTool[] }).tools;

// `my-tools` as the README has it: a folder in the checkout's root (its import is `../plugins/kit/index.ts`).
// mkdtemp makes it 0700, which a plugin process run under another uid (the gateway as root) cannot
// read; `mkdir my-tools` makes it 0755.
const folder = mkdtempSync(path.join(ROOT, 'my-tools-walkthrough-'));
chmodSync(folder, 0o755);
afterAll(() => rmSync(folder, { recursive: true, force: true }));
mkdirSync(path.join(folder, 'scenarios'));
writeFileSync(path.join(folder, 'word-count-plugin.ts'), pluginSource);
writeFileSync(path.join(folder, 'scenarios', 'word-count.json'), scenario);
writeFileSync(path.join(folder, 'word-count.test.ts'), testSource);
writeFileSync(path.join(folder, 'vitest.config.ts'), vitestConfig);
writeFileSync(path.join(folder, 'tsconfig.json'), tsconfig);
const { serve } = servedConveyors();
const run = promisify(execFile);
// The folder's own names for what the README calls `my-tools/…`.
const here = (text: string): string => text.replaceAll('my-tools/', `${path.relative(ROOT, folder)}/`);

describe('plugins/README.md walkthrough', () => {
  it('the word-count plugin answers "count the words" on the simulator, as the README says', async () => {
    const args = here(command).split(/\s+/);
    expect(args).toContain('--tool');
    const { proc, url } = await serve([...args, '--plugins', '{"python":false}', '--log-level', 'silent']);
    const client = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'mistral-7b-instruct-sim', tools, messages: [{ role: 'user', content: prompt }] });
    expect(answer.choices[0]?.message.content).toBe('The tool said: 3 words');
    proc.kill('SIGTERM');
  }, 60_000);

  it("the author's own tests pass with the README's vitest config, run from the checkout's root", async () => {
    // Not this run's settings: the child is a vitest of its own.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS'));
    const { stdout } = await run('npx', here(testCommand).split(/\s+/), { cwd: ROOT, env: { ...env, NO_COLOR: '1' }, timeout: 110_000 });
    expect(stdout).toMatch(/Tests\s+2 passed \(2\)/);
  }, 120_000);

  it("the plugin and its test type-check with the README's tsconfig", async () => {
    await expect(run('npx', ['tsc', '--noEmit', '-p', path.relative(ROOT, folder)], { cwd: ROOT, timeout: 110_000 })).resolves.toBeDefined();
  }, 120_000);
});
