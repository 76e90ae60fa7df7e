import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const dir = suiteTempDir('conveyor-cli-');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real CLI in a child process, as a user runs it; its exit status, stdout and stderr. */
async function conveyor(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  return promisify(execFile)(process.execPath, [CLI, ...args], { timeout: 30_000, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: Outcome) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

const CONTROL_CHARACTER = 'the key holds a control character (a \\r or line end copied with it, as from a file saved on Windows?), which an HTTP header cannot carry';

/** One line on stderr, `conveyor: ` first, nothing on stdout. */
const oneLineFailure = (code: number, text: string | RegExp) => ({
  code,
  stdout: '',
  stderr: typeof text === 'string' ? `conveyor: ${text}\n` : expect.stringMatching(text),
});

describe('the CLI: version, help and usage errors (in a child process)', () => {
  // There was no --version: commander answered "error: unknown option '--version'", exit 1.
  it('prints the version of package.json with --version and -V', async () => {
    expect(await conveyor(['--version'])).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
    expect(await conveyor(['-V'])).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: '' });
  });

  it('says in --help that serve is the default command, where the options are, and what the exit statuses mean', async () => {
    const help = await conveyor(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('-V, --version');
    expect(help.stdout).toContain('serve is the default command');
    expect(help.stdout).toContain('conveyor serve --help');
    expect(help.stdout).toContain('Exit status: 0 done, 1 the command failed, 2 the command line is wrong.');
    const serve = await conveyor(['serve', '--help']);
    expect(serve).toMatchObject({ code: 0, stderr: '' });
    // It once read "(default: in front of the embedded simulator)", which says neither when nor of what.
    expect(serve.stdout).toContain('run the gateway, in front of the embedded simulator unless --upstream is given');
    expect(serve.stdout).not.toMatch(/\(default \d/);
    expect(await conveyor(['help', 'parse'])).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: conveyor parse') });
  }, 60_000);

  // commander looks `help X` up among the commands, and its help command is none of them: `help
  // help` printed the whole help, as an error (stderr, exit 2), where `help parse` prints parse's.
  it("prints the help command's own help to stdout, status 0, for `help help`", async () => {
    const help = await conveyor(['help', 'help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: conveyor help \[command\]\n/);
    expect(help.stdout).toContain("print a command's help");
    expect(help.stdout).not.toContain('Commands:');
  }, 30_000);

  // Commander's own usage errors were two lines (`error: unknown option '--prot'` and its
  // suggestion) with exit 1, the CLI's own `conveyor: …` with 1 or 2 by chance.
  it('answers a wrong command line with one line, conveyor: first, and exit status 2', async () => {
    const cases: Array<[string[], string | RegExp, NodeJS.ProcessEnv?]> = [
      [['--bogus'], "unknown option '--bogus'"],
      [['serve', '--prot', '9000'], "unknown option '--prot' (Did you mean --port?)"],
      [['serve', '--port', 'http'], "option '--port <port>' argument 'http' is invalid. expected a whole number from 0 to 65535"],
      [['--port', '70000'], "option '--port <port>' argument '70000' is invalid. expected a whole number from 0 to 65535"],
      [['serve', '--port'], "option '--port <port>' argument missing"],
      [['serve', '--log-level', 'loud'], /^conveyor: option '--log-level <level>' argument 'loud' is invalid\. Allowed choices are fatal, [^\n]*\n$/],
      [['serve', 'extra'], "too many arguments for 'serve'. Expected 0 arguments but got 1."],
      [['sreve'], "unknown command 'sreve' (commands: serve, parse; conveyor --help)"],
      // Options before the command's name go to the default command, serve: it said only this.
      [['--port', '9000', 'serve'], "too many arguments for 'serve'. Expected 0 arguments but got 1. (a command's options go after its name: conveyor serve --port 9000)"],
      [['--format', 'mistral', 'parse'], "unknown option '--format' (Did you mean --port?) (a command's options go after its name: conveyor parse --format mistral)"],
      // `help WORD` printed the whole help, as an error, with exit 1.
      [['help', 'sreve'], "unknown command 'sreve' (commands: serve, parse; conveyor --help)"],
      [['serve', '--plugins', '{"pyhton":false}'], 'option \'--plugins <json>\' argument \'{"pyhton":false}\' is invalid. pyhton: unknown key (did you mean python?)'],
      [['serve'], /^conveyor: option '--plugins <json>' value '\{bad' from env 'CONVEYOR_PLUGINS' is invalid\. [^\n]*\n$/, { ...process.env, CONVEYOR_PLUGINS: '{bad' }],
      // JSON.parse's own words only ("Expected property name or '}' in JSON at position 1").
      [['serve', '--plugins', '{python:false}'], /^conveyor: option '--plugins <json>' argument '\{python:false\}' is invalid\. not JSON \(Expected property name[^\n]*\): keys and strings go in double quotes, the whole in single quotes, e\.g\. '\{"python":false\}'\n$/],
      // Values the gateway's configuration refuses once exited 1, as if the command had run and failed.
      [['serve', '--upstream', 'ftp://x'], 'option \'--upstream <url...>\': "ftp://x": an upstream is reached over http:, https: or unix:, not ftp:'],
      [['serve', '--upstream', 'http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'], "option '--upstream <url...>': a replica is listed twice"],
      [['serve', '--allowed-origin', 'not-an-origin'], 'option \'--allowed-origin <origin...>\': "not-an-origin" is not an origin: scheme, host and port only, e.g. http://localhost:3000, or *'],
      [['serve', '--allowed-origin', '*'], /^conveyor: option '--allowed-origin <origin\.\.\.>': allowing every origin \(\*\) needs apiKeys \(--api-key\): [^\n]*\n$/],
      [['serve', '--max-queued-requests', '5'], "option '--max-queued-requests <n>': bounds the line of maxConcurrentRequests, which is not set: nothing waits without it"],
      [['serve', '--sim-profile', 'bogus'], /^conveyor: option '--sim-profile <name>' argument 'bogus' is invalid\. not a shipped profile \(fast-test, [^)]*\), nor a path to a profile JSON file\n$/],
      // Read as "no modules", an empty --tool started the gateway without them, silently.
      [['serve', '--tool', ''], "option '--tool <module...>' argument '' is invalid. expected a plugin module, not an empty value"],
      [['serve', '--upstream', ''], "option '--upstream <url...>' argument '' is invalid. expected an upstream base URL, not an empty value"],
      // Taken as given, an empty value listened on every address (--host), ended in a ZodError's
      // stack trace (--python), named every answer "" (--model), failed as "invalid upstream
      // request", status 1 (--upstream-api-key), or started without the file (--config).
      [['serve', '--host', ''], "option '--host <host>' argument '' is invalid. expected an address or a host name (0.0.0.0 or :: for every address), not an empty value (an unset variable?)"],
      [['serve', '--python', ''], "option '--python <path>' argument '' is invalid. expected a Python interpreter, not an empty value (an unset variable?)"],
      [['serve', '--model', ' '], "option '--model <name>' argument ' ' is invalid. expected a model name, not an empty value (an unset variable?)"],
      [['serve', '--upstream-api-key', ''], "option '--upstream-api-key <key>' argument '' is invalid. expected a key, not an empty value (an unset variable?)"],
      [['serve', '--config', ''], "option '--config <file>' argument '' is invalid. expected a config file, not an empty value (an unset variable?)"],
      // Past Node's longest timer the grace's timer fired at once, cutting every request on SIGTERM.
      [['serve', '--shutdown-grace', '3000000'], "option '--shutdown-grace <seconds>' argument '3000000' is invalid. expected at most 2147483 seconds (about 24.8 days, the longest timer Node keeps; past it the timer fires at once)"],
      // The first file was dropped without a word, though two read as two merged.
      [['serve', '--config', 'base.json', '--config', 'site.json'], "option '--config <file>' argument 'site.json' is invalid. a second config file (after base.json): one --config only; files are not merged"],
      // Beside an upstream the simulator does not run: these were ignored without a word. (--port 0:
      // should a check like these regress, the gateway it starts takes no port another one uses.)
      [['serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1', '--sim-profile', 'fast-test'], '--sim-profile sets up the embedded simulator, which does not run with an upstream (--upstream): drop one of them'],
      [['serve', '--port', '0', '--sim-scenarios', 'sim/scenarios', '--upstream', 'http://127.0.0.1:9/v1'], '--sim-scenarios sets up the embedded simulator, which does not run with an upstream (--upstream): drop one of them'],
      // A key with its \r (`"$(cat key.txt)"` of a file saved on Windows, an env file) started, and
      // every request failed as upstream_connection_error (UND_ERR_INVALID_ARG). The key is never repeated.
      [['serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1', '--upstream-api-key', 'sk-secret\r'], `option '--upstream-api-key <key>': ${CONTROL_CHARACTER}`],
      [['serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1'], `option '--upstream-api-key <key>' (from env CONVEYOR_UPSTREAM_API_KEY): ${CONTROL_CHARACTER}`, { ...process.env, CONVEYOR_UPSTREAM_API_KEY: 'sk-secret\r' }],
    ];
    // A few processes at a time: each is a Node start (and tsx on Node 20).
    for (let i = 0; i < cases.length; i += 4) {
      await Promise.all(
        cases.slice(i, i + 4).map(async ([args, text, env]) => expect(await conveyor(args, env), args.join(' ')).toEqual(oneLineFailure(2, text))),
      );
    }
  }, 180_000);

  it('answers a config file it cannot use with one line naming the file, and exit status 1', async () => {
    const missing = path.join(dir, 'no-such.json');
    expect(await conveyor(['serve', '--config', missing])).toEqual(oneLineFailure(1, `config file ${missing}: no such file`));
    const typo = path.join(dir, 'typo.json');
    writeFileSync(typo, JSON.stringify({ gateway: { prot: 9000 } }));
    expect(await conveyor(['serve', '--config', typo])).toEqual(oneLineFailure(1, `config file ${typo}: gateway.prot: unknown key (did you mean port?)`));
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, '{"gateway": {"port": 9000},}');
    expect(await conveyor(['serve', '--config', broken])).toEqual(oneLineFailure(1, new RegExp(`^conveyor: config file ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [^\\n]*JSON[^\\n]*\\n$`)));
    // A value the file holds stays the file's failure (1), the value an option gave beside it a usage error (2).
    const everyOrigin = path.join(dir, 'every-origin.json');
    writeFileSync(everyOrigin, JSON.stringify({ gateway: { allowedOrigins: ['*'] } }));
    expect(await conveyor(['serve', '--config', everyOrigin])).toEqual(oneLineFailure(1, `config file ${everyOrigin}: gateway.allowedOrigins: allowing every origin (*) needs apiKeys (--api-key): without keys, any web page its user opens could run the gateway's tools`));
    const queued = path.join(dir, 'queued.json');
    writeFileSync(queued, JSON.stringify({ gateway: { maxConcurrentRequests: 2 } }));
    expect(await conveyor(['serve', '--config', queued, '--max-queued-requests', '1', '--upstream', 'ftp://x'])).toEqual(oneLineFailure(2, /^conveyor: option '--upstream <url\.\.\.>': "ftp:\/\/x"/));
    // The file's upstream counts as --upstream's does: the flag beside it is the command line's mistake (2).
    const upstream = path.join(dir, 'upstream.json');
    writeFileSync(upstream, JSON.stringify({ gateway: { upstream: { baseUrl: 'http://127.0.0.1:9/v1' } }, sim: { profile: 'fast-test' } }));
    expect(await conveyor(['serve', '--port', '0', '--config', upstream, '--sim-profile', 'fast-test'])).toEqual(
      oneLineFailure(2, `--sim-profile sets up the embedded simulator, which does not run with an upstream (gateway.upstream.baseUrl in ${upstream}): drop one of them`),
    );
  }, 60_000);
});
