import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// sim/README.md lists the simulator's command-line options and the SimOptions fields by hand. Its
// SimOptions sentence had fallen behind the interface (`uds`, `reasoningParser` and
// `enablePromptTokensDetails` were missing), so code that starts the simulator could not learn them there.
const SIM = new URL('../../sim/', import.meta.url);
const README = readFileSync(new URL('README.md', SIM), 'utf8');

describe('sim/README.md', () => {
  it('lists every SimOptions field', () => {
    // A TypeScript interface has no runtime form: its fields are read from the source.
    const source = readFileSync(new URL('sim-server.ts', SIM), 'utf8');
    const body = /export interface SimOptions \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
    const fields = [...body.matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]!);
    expect(fields.length).toBeGreaterThan(10);
    const sentence = /`SimOptions`:([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
    for (const field of fields) expect(sentence, field).toContain(`\`${field}?\``);
  });

  it('describes every option of `npm run sim`', async () => {
    const cli = fileURLToPath(new URL('cli.ts', SIM));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', cli, '--help']);
    const options = [...stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((o) => o !== '--help');
    expect(options.length).toBeGreaterThan(10);
    const paragraph = /Options, vLLM's names:[\s\S]*?\n\n/.exec(README)?.[0] ?? '';
    for (const option of options) expect(paragraph, option).toMatch(new RegExp(`(?<![\\w-])${option}(?![\\w-])`));
  });

  it('names no option in that paragraph that `npm run sim` lacks', async () => {
    const cli = fileURLToPath(new URL('cli.ts', SIM));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', cli, '--help']);
    const paragraph = /Options, vLLM's names:[\s\S]*?\n\n/.exec(README)?.[0] ?? '';
    // `--upstream` is the gateway's option, named there for the URL form `--uds` prints.
    const named = [...new Set([...paragraph.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)].map((m) => m[1]!))].filter((o) => o !== '--upstream');
    expect(named.length).toBeGreaterThan(10);
    for (const option of named) expect(stdout, option).toMatch(new RegExp(`(?<![\\w-])${option}(?![\\w-])`));
  });
});
