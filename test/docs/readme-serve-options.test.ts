import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../support/serve-process.ts';

// README's Set-up block and its Options paragraph are what a new user runs and reads first; both
// are kept by hand beside package.json, .ci/run and the CLI's commander definitions. An option
// added to `conveyor serve` and left out of the paragraph (or one dropped and still listed) is a
// feature nobody finds, or a command line that fails with status 2.
const ROOT = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');
const README = read('README.md');
let serveHelp = '';
beforeAll(async () => {
  serveHelp = (await promisify(execFile)(process.execPath, [CLI, 'serve', '--help'])).stdout;
});

/** The long options a `--help` text lists in its Options column (`  -x, --name <v>  …`). */
function optionsInHelp(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((o) => o !== '--help'));
}

describe('README.md set-up', () => {
  it('runs the gateway and the tests with the commands package.json and .ci/run define', () => {
    const setUp = /## Set-up[\s\S]*?```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    expect(setUp).toMatch(/^npm ci && npm start\s+#/m);
    expect(setUp).toMatch(/^npm ci && npm test\s+#/m);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; engines: { node: string } };
    // "the gateway … in front of its embedded simulator" and "typecheck + the whole test suite".
    expect(pkg.scripts['start']).toBe('node bin/conveyor.js serve');
    expect(pkg.scripts['test']).toBe('tsc --noEmit && vitest run');
    expect(README).toContain(`Node ${pkg.engines.node.replace('>=', '')}+`);
    // CI runs the README's test command after installing as the README does.
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm ci\b.*\n(?:.*\n)*?npm test$/m);
  });

  it('gives the address `npm start` listens on by default', () => {
    expect(serveHelp).toMatch(/--host <host>[\s\S]*?\(default: "127\.0\.0\.1"\)/);
    expect(serveHelp).toMatch(/--port <port>[\s\S]*?\(default:\s+8080\)/);
    expect(README).toContain('the gateway on http://127.0.0.1:8080/v1');
  });
});

describe('README.md, Options (`npm start -- --help`)', () => {
  const paragraph = /Options \(`npm start -- --help`\):[\s\S]*?`conveyor --version`/.exec(README)?.[0] ?? '';

  it('lists every option of `conveyor serve`, and no other', () => {
    const served = [...optionsInHelp(serveHelp)].sort();
    expect(served.length).toBeGreaterThan(20);
    // `--sim-*` is the paragraph's shorthand for both simulator options, not an option.
    const listed = new Set([...paragraph.matchAll(/`(--[a-z][a-z-]*)(?![a-z*-])/g)].map((m) => m[1]!));
    expect([...listed].sort()).toEqual(served);
  });

  it("names each option's environment variable", () => {
    const variables = [...serveHelp.matchAll(/env:\s+(CONVEYOR_[A-Z_]+)/g)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(4);
    for (const variable of variables) expect(README, variable).toContain(variable);
  });
});

// The parser CLI's paragraph is where a user debugging a model's output learns its switches:
// `--starts-in-reasoning` (DeepSeek-R1, QwQ: the prompt opened the <think> block) was in --help
// only, and a reader of the README's `--reasoning` example read R1's whole output as reasoning.
describe('README.md, the parser CLI (`conveyor parse`)', () => {
  it('names every option of `conveyor parse`', async () => {
    const parseHelp = (await promisify(execFile)(process.execPath, [CLI, 'parse', '--help'])).stdout;
    const section = /Debug your model's raw output with the parser CLI:[\s\S]*?`conveyor parse --help` lists the formats\./.exec(README)?.[0] ?? '';
    const options = [...optionsInHelp(parseHelp)];
    expect(options.length).toBeGreaterThan(4);
    for (const option of options) expect(section, option).toContain(option);
  });
});
