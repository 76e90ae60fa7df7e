/**
 * What a JS plugin process costs before its first call (runtime `process` starts one per call,
 * and a warm spare after each): spawn → the `ready` message, wall time and the process's CPU,
 * with each way this Node can load the plugin host — through tsx (`--import tsx`, the only way on
 * Node 20) and with Node's own type stripping (Node 22.18+/24) — in alternating rounds.
 *
 *   npx tsx bench/plugin-start/run.ts [--runs N] [--out DIR]   → bench/results/<date>-plugin-start-node<major>.{md,json}
 *
 * The processes start outside the sandbox (bwrap, uid, rlimits: the same for both ways), so the
 * numbers are the loader's and the modules'. Then what a caller sees: cold calls (no warm spare)
 * of a plugin through a real, sandboxed process pool, in child processes that run the pool with
 * and without `--no-experimental-strip-types` (cold-calls.ts), alternating.
 */
import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nativeTypeScript, PLUGIN_HOST_SCRIPT, tsxLoaderUrl } from '../../sandbox/runtimes/node-recipe.ts';
import { processCpuMs } from '../overhead/proc-cpu.ts';
import { Command } from 'commander';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { summarize } from '../stats.ts';
import { pluginStartMarkdown, type Loader, type StartRow } from './plugin-start-report.ts';
import { commandLine } from '../command-line.ts';
import { progressBar, restoreTerminalOnSignals } from '../progress.ts';

const LOADERS: Record<Loader, readonly string[]> = {
  tsx: ['--import', tsxLoaderUrl()],
  'type stripping': ['--experimental-strip-types'],
};

const PLUGINS = {
  'none (host only)': undefined,
  word_count: 'plugins/kit/examples/word-count-plugin.ts',
  database: 'plugins/database/database-plugin.ts',
} as const;

interface Start {
  wallMs: number;
  cpuMs: number;
}

function startHost(loader: Loader, plugin: string | undefined): Promise<Start> {
  const argv = ['--max-old-space-size=128', ...LOADERS[loader], PLUGIN_HOST_SCRIPT, '--guest=node-vm'];
  if (plugin) argv.push(`--preload=${pathToFileURL(plugin).href}`);
  const started = performance.now();
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  const channel = child.stdio[3]!;
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve, reject) => {
    const early = (code: number | null) => reject(new Error(`plugin host exited (${code}) before ready: ${stderr.slice(-500)}`));
    child.once('exit', early);
    let line = '';
    channel.on('data', (b: Buffer) => {
      line += b.toString();
      if (!line.includes('\n')) return;
      const wallMs = performance.now() - started;
      if (!line.startsWith('{"t":"ready"')) return reject(new Error(`unexpected first message: ${line.slice(0, 200)}`));
      const cpuMs = processCpuMs(child.pid!);
      child.off('exit', early);
      child.once('exit', () => resolve({ wallMs, cpuMs }));
      channel.destroy();
    });
  });
}

const program = usageErrorsExit2(new Command().name('plugin-start'))
  .description('What a JS plugin process costs before its first call, through tsx and with Node\'s type stripping.')
  .option('--runs <n>', 'rounds of starts per plugin and loader', wholeNumber(1, 1000), 10)
  .option('--out <dir>', 'where result files go', 'bench/results')
  .parse();
const { runs, out } = program.opts<{ runs: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, out);
const loaders: Loader[] = nativeTypeScript() ? ['tsx', 'type stripping'] : ['tsx'];
// A bar on a terminal, plain lines in a log (its `\r` redraws were one long line there); Ctrl-C
// gives the terminal back the cursor the bar hides.
restoreTerminalOnSignals();
const samples = new Map<string, Start[]>();
const startsBar = progressBar('plugin-start');
for (let round = 0; round < runs; round++) {
  for (const [name, plugin] of Object.entries(PLUGINS)) {
    // A B, B A, …: whatever else the machine does falls on both alike.
    const order = round % 2 === 0 ? loaders : [...loaders].reverse();
    for (const loader of order) {
      const key = `${name}\t${loader}`;
      samples.set(key, [...(samples.get(key) ?? []), await startHost(loader, plugin)]);
    }
  }
  startsBar.update(round + 1, runs);
}
startsBar.stop();

/** Two cold calls through a sandboxed pool, in a child process whose Node loads plugin processes with `loader`. */
function coldCalls(loader: Loader): { sandbox: string; ms: number[] } {
  const script = fileURLToPath(new URL('./cold-calls.ts', import.meta.url));
  const flags = loader === 'tsx' && nativeTypeScript() ? ['--no-experimental-strip-types'] : [];
  const out = execFileSync(process.execPath, [...flags, '--import', tsxLoaderUrl(), script, '--count', '2'], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { sandbox: string; ms: number[] };
}
const cold = new Map<Loader, number[]>();
let sandbox = '';
const coldBar = progressBar('plugin-start cold calls');
for (let round = 0; round < Math.ceil(runs / 2); round++) {
  for (const loader of round % 2 === 0 ? loaders : [...loaders].reverse()) {
    const result = coldCalls(loader);
    sandbox = result.sandbox;
    cold.set(loader, [...(cold.get(loader) ?? []), ...result.ms]);
  }
  coldBar.update(round + 1, Math.ceil(runs / 2));
}
coldBar.stop();

const rows: StartRow[] = [];
for (const [key, starts] of samples) {
  const [plugin, loader] = key.split('\t') as [string, Loader];
  rows.push({ plugin, loader, wallMs: summarize(starts.map((s) => s.wallMs)), cpuMs: summarize(starts.map((s) => s.cpuMs)) });
}
const command = commandLine('npx tsx bench/plugin-start/run.ts', process.argv.slice(2));
const major = process.versions.node.split('.')[0];
const coldRows = loaders.map((loader) => ({ loader, ms: summarize(cold.get(loader) ?? []) }));
const markdown = pluginStartMarkdown({
  command,
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpusLine(),
  runs,
  loaders,
  plugins: Object.keys(PLUGINS),
  rows,
  sandbox,
  coldRows,
});
const files = writeResultFiles(out, `plugin-start-node${major}`, {
  '.md': markdown,
  '.json': jsonText({ command, node: process.version, cpu: os.cpus()[0]?.model.trim(), runs, rows, coldCalls: { sandbox, rows: coldRows } }),
});
console.log(markdown);
console.log(`results: ${files.join(', ')}`);
