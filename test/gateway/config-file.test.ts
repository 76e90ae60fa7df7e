import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../core/errors.ts';
import { readConfigFile } from '../../gateway/config-file.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-config-');
let n = 0;

/** Writes `content` (JSON unless a string) to a fresh file in `folder` and returns its path. */
function configFile(content: unknown, folder = dir): string {
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, `conveyor-${++n}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('conveyor serve --config FILE', () => {
  it('reads every section as written, without filling in defaults', () => {
    const content = {
      gateway: { port: 9090, onToolReject: 'error', upstream: { timeouts: { firstTokenMs: 120_000 } }, toolParsers: [{ model: 'my-finetune', format: 'hermes' }] },
      sim: { profile: 'mistral-7b-h100', prefixCacheTokens: 0, toolCallParser: 'mistral', enablePromptTokensDetails: true },
      sandbox: { limits: { memoryMb: 512 } },
      plugins: { http_get: false },
      runtimes: { process: { maxProcesses: 4 } },
      logLevel: 'warn',
      shutdownGraceSeconds: 5,
    };
    expect(readConfigFile(configFile(content))).toEqual(content);
  });

  it('reads a file a Windows editor saved with a byte-order mark', () => {
    expect(readConfigFile(configFile('\uFEFF{"gateway": {"port": 9091}}'))).toEqual({ gateway: { port: 9091 } });
  });

  it('makes relative paths relative to the file, not to the working directory', () => {
    const folder = path.join(dir, 'etc');
    const file = configFile(
      {
        toolModules: ['plugins/word-count.ts', '/abs/other.ts', { module: 'plugins/reader.ts?file=data/rows.csv', readOnlyPaths: ['data'] }],
        sim: { profile: 'profiles/my-gpu.json', scenarioDirs: ['scenarios'] },
        plugins: { database: { file: 'shop.sqlite' }, search: { index: 'index.sqlite' } },
        sandbox: { python: 'venv/bin/python3' },
      },
      folder,
    );
    expect(readConfigFile(file)).toEqual({
      toolModules: [path.join(folder, 'plugins/word-count.ts'), '/abs/other.ts', { module: path.join(folder, 'plugins/reader.ts?file=data/rows.csv'), readOnlyPaths: [path.join(folder, 'data')] }],
      sim: { profile: path.join(folder, 'profiles/my-gpu.json'), scenarioDirs: [path.join(folder, 'scenarios')] },
      plugins: { database: { file: path.join(folder, 'shop.sqlite') }, search: { index: path.join(folder, 'index.sqlite') } },
      sandbox: { python: path.join(folder, 'venv/bin/python3') },
    });
    // A profile file is anything with a slash, as sim/timing-profile.ts reads it: one without .json
    // was taken from the working directory.
    expect(readConfigFile(configFile({ sim: { profile: 'profiles/my-gpu' } }, folder)).sim?.profile).toBe(path.join(folder, 'profiles/my-gpu'));
    // A shipped profile's name and a bare interpreter name stay names.
    expect(readConfigFile(configFile({ sim: { profile: 'fast-test' }, sandbox: { python: 'python3' } }, folder))).toEqual({
      sim: { profile: 'fast-test' },
      sandbox: { python: 'python3' },
    });
  });

  it("makes a Unix socket upstream's relative socket path relative to the file, keeping its base path", () => {
    const folder = path.join(dir, 'run');
    const one = readConfigFile(configFile({ gateway: { upstream: { baseUrl: 'unix:vllm.sock:/v1' } } }, folder));
    expect(one.gateway?.upstream?.baseUrl).toBe(`unix:${path.join(folder, 'vllm.sock')}:/v1`);
    const replicas = readConfigFile(configFile({ gateway: { upstream: { baseUrl: ['unix:a.sock', 'unix:/run/b.sock:/v1', 'http://127.0.0.1:8000/v1'] } } }, folder));
    expect(replicas.gateway?.upstream?.baseUrl).toEqual([`unix:${path.join(folder, 'a.sock')}`, 'unix:/run/b.sock:/v1', 'http://127.0.0.1:8000/v1']);
  });

  it('refuses a misspelt key at any depth, naming the file and where', () => {
    for (const [content, where] of [
      [{ gatway: {} }, 'gatway'],
      [{ gateway: { maxToolRound: 4 } }, 'maxToolRound'],
      [{ gateway: { upstream: { timeout: {} } } }, 'timeout'],
      [{ gateway: { codeFence: { language: ['py'] } } }, 'language'],
      [{ plugins: { pyhton: false } }, 'pyhton'],
      [{ runtimes: { process: { maxProcess: 2 } } }, 'maxProcess'],
    ] as const) {
      const file = configFile(content);
      expect(() => readConfigFile(file)).toThrow(GatewayConfigError);
      expect(() => readConfigFile(file)).toThrow(new RegExp(`config file ${file}: .*${where}`, 's'));
    }
  });

  it('names a misspelt key by its whole path and the key it was probably meant to be', () => {
    const message = (content: unknown) => {
      const file = configFile(content);
      try {
        readConfigFile(file);
      } catch (err) {
        return (err as Error).message.slice(`config file ${file}: `.length);
      }
      throw new Error('accepted');
    };
    expect(message({ gateway: { prot: 8080 } })).toBe('gateway.prot: unknown key (did you mean port?)');
    expect(message({ Gateway: {} })).toBe('Gateway: unknown key (did you mean gateway?)');
    expect(message({ gateway: { upstream: { timeout: {} } } })).toBe('gateway.upstream.timeout: unknown key (did you mean timeouts?)');
    // Inside a union (a toolModules entry is a path or an object), the object's own complaints.
    expect(message({ toolModules: [{ modul: 'x.ts' }] })).toBe('toolModules[0].module: missing; toolModules[0].modul: unknown key (did you mean module?)');
    // Nothing near: the keys that level takes.
    expect(message({ runtimes: { process: { zzz: 1 } } })).toBe('runtimes.process.zzz: unknown key (known: maxProcesses, maxQueue, sparesPerPlugin, maxSpares, maxIdlePerPlugin, idleMs, startupTimeoutMs)');
    // Every problem, in one line.
    expect(message({ gateway: { port: 'eighty', upstream: { timeout: {} } } })).toBe('gateway.port: expected number, received string (got "eighty"); gateway.upstream.timeout: unknown key (did you mean timeouts?)');
  });

  it("takes the process pool's start-up timeout, which startConveyor hands the pool as it is", () => {
    expect(readConfigFile(configFile({ runtimes: { process: { startupTimeoutMs: 5000 } } })).runtimes?.process?.startupTimeoutMs).toBe(5000);
    expect(() => readConfigFile(configFile({ runtimes: { process: { startupTimeoutMs: 0 } } }))).toThrow(/runtimes\.process\.startupTimeoutMs/);
  });

  it('places a JSON syntax error by line and column', () => {
    expect(() => readConfigFile(configFile('{\n  "gateway": {\n    "port": 1,\n  }\n}'))).toThrow(/not JSON: .*\(line 4 column 3\)/);
  });

  it('accepts the example in the README', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const example = /\*\*Config file\.\*\*[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(readConfigFile(configFile(example!)).gateway?.onToolReject).toBe('error');
  });

  it('refuses wrong values and what is not JSON', () => {
    expect(() => readConfigFile(configFile({ gateway: { port: 'eighty' } }))).toThrow(/gateway\.port/);
    expect(() => readConfigFile(configFile({ logLevel: 'loud' }))).toThrow(/logLevel/);
    expect(() => readConfigFile(configFile({ sim: { toolCallParser: 'hermes' } }))).toThrow(/sim\.toolCallParser/);
    // Tool-parser rules are checked at start-up, not found out by every request they apply to
    // (a 500 for a pattern that does not compile, a client's 400 for a misspelt format).
    expect(() => readConfigFile(configFile({ gateway: { toolParsers: [{ model: '(', format: 'hermes' }] } }))).toThrow(/gateway\.toolParsers\[0\]\.model: .*not a valid regular expression/);
    expect(() => readConfigFile(configFile({ gateway: { toolParsers: [{ model: 'my-model', format: 'hermez' }] } }))).toThrow(/gateway\.toolParsers\[0\]\.format: unknown tool-call format "hermez"/);
    expect(() => readConfigFile(configFile({ gateway: { defaultToolParser: 'hermez' } }))).toThrow(/gateway\.defaultToolParser/);
    expect(readConfigFile(configFile({ gateway: { defaultToolParser: 'none', toolParsers: [{ model: 'x', format: 'qwen3_coder' }] } })).gateway?.defaultToolParser).toBe('none');
    // Past 2^31-1 ms Node's timers fire after 1 ms: a limit written large to mean "none" would stop everything at once.
    expect(() => readConfigFile(configFile({ gateway: { clientStallMs: 3e9 } }))).toThrow(/gateway\.clientStallMs: must be at most 2147483647 ms/);
    expect(() => readConfigFile(configFile({ gateway: { upstream: { timeouts: { idleMs: 3e9 } } } }))).toThrow(/gateway\.upstream\.timeouts\.idleMs: must be at most 2147483647 ms/);
    expect(() => readConfigFile(configFile({ sandbox: { limits: { wallClockMs: 3e9 } } }))).toThrow(/sandbox\.limits\.wallClockMs: must be at most 2147483647 ms/);
    expect(() => readConfigFile(configFile({ runtimes: { process: { idleMs: 3e9 } } }))).toThrow(/runtimes\.process\.idleMs: must be at most 2147483647 ms/);
    expect(() => readConfigFile(configFile({ plugins: { database: { timeLimitMs: 2_147_483_000 } } }))).toThrow(/plugins\.database\.timeLimitMs: must be at most 2147482647 ms/);
    expect(readConfigFile(configFile({ sandbox: { limits: { wallClockMs: 2_147_483_647 } } })).sandbox?.limits?.wallClockMs).toBe(2_147_483_647);
    // The shutdown grace ends in a timer too: 3,000,000 s cut every request on the first SIGTERM.
    expect(() => readConfigFile(configFile({ shutdownGraceSeconds: 3_000_000 }))).toThrow(/shutdownGraceSeconds: must be at most 2147483 s/);
    expect(readConfigFile(configFile({ shutdownGraceSeconds: 2_147_483 })).shutdownGraceSeconds).toBe(2_147_483);
    // An empty string where a setting names something: "" listened on every address, named every
    // answer "", or failed the start as "invalid upstream request" naming neither file nor key.
    expect(() => readConfigFile(configFile({ gateway: { host: '' } }))).toThrow(/gateway\.host: expected an address or a host name .*not an empty value/);
    expect(() => readConfigFile(configFile({ gateway: { upstream: { model: ' ' } } }))).toThrow(/gateway\.upstream\.model: expected a model name, not an empty value/);
    expect(() => readConfigFile(configFile({ gateway: { upstream: { apiKey: '' } } }))).toThrow(/gateway\.upstream\.apiKey: expected a key, not an empty value/);
    expect(() => readConfigFile(configFile('{"gateway": {'))).toThrow(/config file .*JSON/);
    expect(() => readConfigFile(path.join(dir, 'missing.json'))).toThrow(`config file ${path.join(dir, 'missing.json')}: no such file`);
    // A folder was answered in Node's words: "EISDIR: illegal operation on a directory, read".
    expect(() => readConfigFile(dir)).toThrow(new RegExp(`^config file ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: it is a folder, not a JSON file$`));
  });

  it('says what to change in a file it cannot use: where a relative name was looked for, YAML, a key with a line end, an unknown level', () => {
    // Node's "ENOENT: no such file or directory, open 'conveyor.json'" left out the folder it looked in.
    expect(() => readConfigFile('no-such-conveyor.json')).toThrow(
      `config file no-such-conveyor.json: no such file ${path.resolve('no-such-conveyor.json')} (a relative path is taken from the working directory, ${process.cwd()})`,
    );
    // A YAML file was answered "Unexpected token 'g'", as if it were JSON with a typo.
    const yaml = path.join(dir, 'conveyor.yaml');
    writeFileSync(yaml, 'gateway:\n  port: 9000\n');
    expect(() => readConfigFile(yaml)).toThrow(`config file ${yaml}: not JSON (a config file is JSON only; YAML is not read): `);
    // A key with its \r (a file saved on Windows) failed every request as upstream_connection_error (UND_ERR_INVALID_ARG).
    let thrown: unknown;
    try {
      readConfigFile(configFile({ gateway: { upstream: { apiKey: 'sk-secret\r' } } }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GatewayConfigError);
    expect((thrown as Error).message).toMatch(/: gateway\.upstream\.apiKey: the key holds a control character \(a \\r or line end copied with it, as from a file saved on Windows\?\), which an HTTP header cannot carry$/);
    expect((thrown as Error).message).not.toContain('sk-secret');
    // A client key with its line end was accepted, and every client was then refused as invalid_api_key.
    for (const key of ['sk-client\r\n', ' sk-client', 'sk-client\t']) {
      expect(() => readConfigFile(configFile({ gateway: { apiKeys: ['k2', key] } }))).toThrow(/: gateway\.apiKeys\[1\]: the key has a space or line end at an end, or a control character/);
    }
    expect(() => readConfigFile(configFile({ gateway: { apiKeys: ['sk-client\n'] } }))).not.toThrow(/sk-client/);
    expect(readConfigFile(configFile({ gateway: { apiKeys: ['sk a b'] } })).gateway?.apiKeys).toEqual(['sk a b']);
    // zod's "Invalid option: " said nothing the rest of the line does not.
    expect(() => readConfigFile(configFile({ logLevel: 'verbose' }))).toThrow(/: logLevel: expected one of "fatal"\|"error"\|/);
  });
});
