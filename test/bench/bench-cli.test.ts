import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startSim } from '../../sim/sim-server.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('npm run bench -- workloads --quick', () => {
  const out = suiteTempDir('conveyor-bench-');
  const piped = suiteTempDir('conveyor-bench-head-');

  // Checks that the files and their fields exist, not the timings (those belong in bench/results).
  it('drives the six workloads through real gateways and writes Markdown, JSON and SVG results', async () => {
    await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'workloads', '--quick', '--profile', 'fast-test', '--out', out], { cwd: root, timeout: 240_000 });
    const files = (await readdir(out)).sort();
    expect(files).toHaveLength(4);
    const stem = files.find((f) => f.endsWith('.json'))!.replace(/\.json$/, '');
    expect(files).toEqual([`${stem}-timelines.svg`, `${stem}.json`, `${stem}.md`, `${stem}.svg`].sort());
    expect(stem).toMatch(/^\d{4}-\d{2}-\d{2}-workloads-quick$/);

    const json = JSON.parse(await readFile(path.join(out, `${stem}.json`), 'utf8'));
    expect(json.meta).toMatchObject({ profile: 'fast-test', toolProfile: { name: 'paper' } });
    expect(json).toMatchObject({ quick: true, failures: [] });
    const names = json.reports.map((r: { workload: string }) => r.workload);
    expect(names).toEqual(['codegen', 'search', 'planning', 'validation', 'database', 'calculator']);
    for (const r of json.reports) {
      for (const key of ['on', 'off']) expect(Object.keys(r[key])).toEqual(expect.arrayContaining(['mean', 'std', 'p50', 'p99']));
      expect(r).toHaveProperty('improvementPct');
      expect(r).toHaveProperty('boundMs');
      expect(r).toHaveProperty('boundAchieved');
      expect(r.failedCalls).toBeTypeOf('number');
      expect(r.generationMs.length).toBeGreaterThan(0);
      expect(r.records).toHaveLength(4);
      // The median run of each mode, whole: from its arrival to its end.
      for (const mode of ['on', 'off']) expect(r.examples[mode].map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['request-start', 'round-start', 'request-end']));
    }
    expect(json.reports.find((r: { workload: string }) => r.workload === 'validation').metric).toBe('detection');

    const md = await readFile(path.join(out, `${stem}.md`), 'utf8');
    expect(md).toContain('a smoke test');
    expect(md).toContain('| failed tool calls |');
    expect(md).toMatch(/^python: .*; search: /m);
    for (const name of names) expect(md).toContain(`| ${name}`);
    const svg = await readFile(path.join(out, `${stem}.svg`), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    for (const name of names) expect(svg).toContain(name);
    const timelines = await readFile(path.join(out, `${stem}-timelines.svg`), 'utf8');
    expect(timelines.startsWith('<svg')).toBe(true);
    for (const name of names) expect(timelines).toContain(`>${name}</text>`);
    expect(timelines.match(/>on \(partial\)</g)).toHaveLength(names.length);
  }, 300_000);

  it('exits 0 with its files written when the reader of its summary stops early (| head)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'calculator', '--quick', '--profile', 'fast-test', '--out', piped], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // As `head -1` does: the first line read, the pipe closed.
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain('EPIPE');
    expect((await readdir(piped)).filter((f) => f.endsWith('.md'))).toHaveLength(1);
  }, 120_000);

  it('refuses, in one line and before starting anything, what it could not honour', async () => {
    const attempts = [
      // The shipped profiles, named once.
      { args: ['calculator', '--profile', 'no-such-profile'], message: /^bench: timing profile "no-such-profile" not found[^(]*\(looked for [^)]*\); shipped profiles: [^()]*$/ },
      { args: ['sweep', '--runs', '5', '--profile', 'mistral-7b-h100'], message: /^bench: --runs, --profile only set\(s\) up the workloads, and none is named: sweep/ },
      { args: ['calculator', '--model', 'some-model'], message: /^bench: --model names the model of a real upstream/ },
      { args: ['calculator', '--quick', '--runs', '5'], message: /^bench: --quick runs each workload twice per mode: give --runs or --quick, not both$/ },
      // A profile file that is not one: its schema's complaints, on one line.
      { args: ['calculator', '--profile', 'package.json'], message: /^bench: .*package\.json.*$/ },
      { args: ['calculator', '--upstream', 'http://127.0.0.1:9/v1', '--sim-tool-call-parser', 'mistral'], message: /^bench: --sim-tool-call-parser sets up the simulator/ },
      { args: ['calculator', '--out', '/dev/null/results'], message: /^bench: --out \/dev\/null\/results: / },
      { args: ['calculator', '--runs', '2abc'], message: /^bench: option '--runs <n>' argument '2abc' is invalid\. expected a whole number from 1 to 1000$/ },
      { args: ['calculator', '--bogus'], message: /^bench: unknown option '--bogus'$/ },
      { args: ['calculator', '--upstream', 'notaurl'], message: /^bench: --upstream: "notaurl" is not a URL/ },
      { args: ['calculator', '--upstream', 'http://127.0.0.1:9/v1,ftp://x/v1'], message: /^bench: --upstream: "ftp:\/\/x\/v1": an upstream is reached over http:, https: or unix:/ },
      // Refused by the gateways' configuration only once they started (exit 1), after the /models check.
      { args: ['calculator', '--upstream', 'http://127.0.0.1:9/v1,http://127.0.0.1:9/v1/'], message: /^bench: --upstream: http:\/\/127\.0\.0\.1:9\/v1 is listed twice: each replica once$/ },
      { args: ['nonsense'], message: /^bench: unknown name "nonsense": choose from codegen, .*, workloads, all$/ },
      // A folder in the name failed only when the files were written, after the whole run (ENOENT, results lost).
      { args: ['calculator', '--name', 'a/b', '--profile', 'no-such-profile'], message: /^bench: --name "a\/b": a result file name, without a folder/ },
      { args: ['calculator', '--name', '../elsewhere', '--profile', 'no-such-profile'], message: /^bench: --name "\.\.\/elsewhere"/ },
      // The real upstream decodes at its own speed: a decode profile given with it was ignored without a word.
      { args: ['calculator', '--upstream', 'http://127.0.0.1:9/v1', '--profile', 'mistral-7b-h100'], message: /^bench: --profile sets the simulator's decode timing: with --upstream/ },
      // Only codegen runs Python, and only it and search/planning use a tool the profile times: given
      // without them, these ran the same set-up as without, while the report's command showed them.
      { args: ['calculator', 'database', '--cold-imports'], message: /^bench: --cold-imports sets up the Python tool, and none of database, calculator runs Python \(codegen does\)$/ },
      { args: ['validation', '--tool-profile', 'local'], message: /^bench: --tool-profile times the Python and search tools, and none of validation uses them \(codegen, search, planning do\)$/ },
    ];
    for (const { args, message } of attempts) {
      const failed = await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', ...args], { cwd: root, timeout: 60_000 }).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed, args.join(' ')).not.toBeNull();
      // A wrong command line, told before anything runs: status 2, one line, whoever checked it.
      expect(failed!.code, args.join(' ')).toBe(2);
      expect(failed!.stderr.trim()).toMatch(message);
      expect(failed!.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(failed!.stderr).not.toContain('simulator exited');
      expect(failed!.stderr).not.toMatch(/^\s+at /m);
    }
    // 19 CLI starts in a row: ~2.5 s each on an idle machine, 7-12 s at a load average of 13.
  }, 300_000);

  it('checks --upstream before any gateway starts: one line that says what to change, exit status 2, no result files', async () => {
    const empty = suiteTempDir('conveyor-bench-fail-');
    const failed = await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'calculator', '--runs', '1', '--upstream', 'http://127.0.0.1:9/v1', '--out', empty], {
      cwd: root,
      timeout: 120_000,
    }).then(
      () => null,
      (err: { code: number; stderr: string; stdout: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr.trim()).toMatch(/^bench: --upstream http:\/\/127\.0\.0\.1:9\/v1: .*ECONNREFUSED.* is the server running and listening there\?$/);
    expect(failed?.stdout).toBe('');
    expect(await readdir(empty)).toEqual([]);
  }, 150_000);

  for (const serial of [false, true]) {
    it(`keeps the workloads that finished when another fails${serial ? ' (--serial-workloads)' : ' (all at once: the failed one leaves the warm-up barrier)'}`, async () => {
      const out = suiteTempDir('conveyor-bench-partial-');
      const sim = await startSim({ profile: 'fast-test' });
      // The simulator behind a proxy that refuses the database workload's requests (by its question:
      // --upstream is a real server to the bench, which sends it no sim scenario).
      const proxy = createServer((req, res) => {
        const body: Buffer[] = [];
        req.on('data', (b: Buffer) => body.push(b));
        req.on('end', () => {
          const text = Buffer.concat(body);
          if (text.includes('List all employees in the database.')) {
            res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'error', message: 'refused by the test', type: 'InternalServerError', code: 500 }));
            return;
          }
          const { port } = new URL(sim.url);
          const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
            res.writeHead(answer.statusCode!, answer.headers);
            answer.pipe(res);
          });
          upstream.end(text);
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
        const failed = await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'database', 'calculator', '--runs', '2', '--upstream', url, '--out', out, ...(serial ? ['--serial-workloads'] : [])], {
          cwd: root,
          timeout: 120_000,
        }).then(
          () => null,
          (err: { code: number; stderr: string }) => err,
        );
        expect(failed?.code).toBe(1);
        expect(failed?.stderr).toMatch(/^bench: workload database failed: .*refused by the test/m);
        const json = JSON.parse(await readFile(path.join(out, (await readdir(out)).find((f) => f.endsWith('.json'))!), 'utf8'));
        expect(json.reports.map((r: { workload: string }) => r.workload)).toEqual(['calculator']);
        expect(json.reports[0].records).toHaveLength(4);
        expect(json.failures).toEqual([{ part: 'workload database', message: expect.stringContaining('refused by the test') }]);
        // Neither workload runs Python or searches: the header does not describe those set-ups.
        expect(json.meta).toMatchObject({ python: 'not used', search: 'not used' });
        const md = await readFile(path.join(out, (await readdir(out)).find((f) => f.endsWith('.md'))!), 'utf8');
        expect(md).not.toMatch(/^(python|search): /m);
      } finally {
        proxy.closeAllConnections();
        await new Promise((resolve) => proxy.close(resolve));
        await sim.close();
      }
    }, 150_000);
  }
});
