/**
 * What the process runtime's deferral costs a verdict. The gateway handles a plugin process's
 * messages at the end of the event loop's turn (setImmediate, plugin-process.ts), after the rest
 * of that turn's I/O, so output the child printed before its result is counted first. This times
 * the mechanism alone: a child echoes each line on fd 3, as a plugin host answers a piece, and the
 * gateway side handles the echo in the 'data' callback (direct) or in a setImmediate (deferred),
 * alternating blocks in one run; quiet, and beside busy sockets whose reads cost CPU, as a gateway
 * streaming other requests' tokens has.
 *
 *   npx tsx bench/runtimes/channel-deferral.ts [--pings N] [--noise K] [--out DIR]
 *     → bench/results/<date>-channel-deferral.{md,json}
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { Command } from 'commander';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { commandLine } from '../command-line.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { summarize, type Summary } from '../stats.ts';
import { pingBlocks, type Mode } from './ping-blocks.ts';

const ECHO = `const s = new (require('node:net').Socket)({ fd: 3, readable: true, writable: true }); s.on('data', (b) => s.write(b));`;
// Writes an SSE line every millisecond (Node's shortest timer) forever: another request's token
// stream, as the gateway reads it.
const NOISE = `setInterval(() => process.stdout.write('data: {"choices":[{"delta":{"content":"tok"}}]}\\n\\n'), 1);`;
/** CPU spent per noise read: parsing, the parser, an SSE write (the gateway measures ~150 µs a token, most of it not in one read). */
const NOISE_WORK_US = 30;
const BLOCK = 50;


function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

async function measure(pings: number, noise: number): Promise<Record<Mode, number[]>> {
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < noise; i++) {
      const busy = spawn(process.execPath, ['-e', NOISE], { stdio: ['ignore', 'pipe', 'ignore'] });
      busy.stdout!.on('data', () => spin(NOISE_WORK_US));
      children.push(busy);
    }
    const echo = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] });
    children.push(echo);
    const channel = echo.stdio[3] as Readable & Writable;
    const samples: Record<Mode, number[]> = { direct: [], deferred: [] };
    let mode: Mode = 'direct';
    let sent = 0;
    let answered: (() => void) | undefined;
    const handle = (): void => {
      samples[mode].push((performance.now() - sent) * 1000);
      answered?.();
    };
    channel.on('data', () => (mode === 'direct' ? handle() : setImmediate(handle)));
    const ping = (): Promise<void> =>
      new Promise((resolve) => {
        answered = resolve;
        sent = performance.now();
        channel.write('{"t":"piece","seq":1}\n');
      });
    // Warm-up, then blocks of each mode in turn (ABAB…), `pings` of each.
    for (let i = 0; i < 200; i++) await ping();
    samples.direct.length = 0;
    for (const block of pingBlocks(pings, BLOCK)) {
      mode = block.mode;
      for (let i = 0; i < block.pings; i++) await ping();
    }
    return samples;
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

function row(label: string, s: Record<Mode, Summary>): string {
  const us = (v: number) => v.toFixed(1);
  return `| ${label} | ${us(s.direct.p50)} / ${us(s.direct.p99)} | ${us(s.deferred.p50)} / ${us(s.deferred.p99)} | ${us(s.deferred.p50 - s.direct.p50)} / ${us(s.deferred.p99 - s.direct.p99)} |`;
}

async function main(): Promise<void> {
  const program = new Command()
    .name('channel-deferral')
    .description("What handling a plugin process's messages at the end of the event loop's turn costs a round trip.")
    .option('--pings <n>', 'round trips per mode and load', wholeNumber(1), 2000)
    .option('--noise <k>', 'busy sockets beside the channel in the loaded rows', wholeNumber(0), 4)
    .option('--out <dir>', 'where result files go', 'bench/results');
  // A wrong command line as every bench script answers it: one line named after it, status 2.
  const opts = usageErrorsExit2(program).parse().opts<{ pings: number; noise: number; out: string }>();
  // Before measuring: a bad --out found only when the files are written loses the whole run.
  checkOutOption(program, opts.out);
  // The command as given, as every bench script writes it: built from --pings and --noise alone, it
  // dropped --out, and a rerun of it wrote to bench/results.
  const command = commandLine('npx tsx bench/runtimes/channel-deferral.ts', process.argv.slice(2));
  const results: Array<{ load: string; direct: Summary; deferred: Summary }> = [];
  for (const [load, noise] of [['quiet', 0], [`${opts.noise} busy sockets`, opts.noise]] as const) {
    const samples = await measure(opts.pings, noise);
    results.push({ load, direct: summarize(samples.direct), deferred: summarize(samples.deferred) });
    console.log(`${load}: direct p50 ${results.at(-1)!.direct.p50.toFixed(1)} µs, deferred p50 ${results.at(-1)!.deferred.p50.toFixed(1)} µs`);
  }
  const md = [
    '# Process runtime: what handling a message at the end of the turn costs a verdict',
    '',
    `\`${command}\` on Node ${process.version}, ${new Date().toISOString()}. Round trip gateway → child → gateway over a`,
    `pipe on fd 3, µs, p50 / p99 of ${opts.pings} per cell, the modes in alternating blocks of ${BLOCK}; busy sockets: children writing`,
    `an SSE line every millisecond, each read costing ${NOISE_WORK_US} µs of CPU.`,
    '',
    '| load | direct | deferred (setImmediate) | added |',
    '| --- | ---: | ---: | ---: |',
    ...results.map((r) => row(r.load, r)),
    '',
  ].join('\n');
  const files = writeResultFiles(opts.out, 'channel-deferral', { '.md': md, '.json': jsonText({ command, node: process.version, noiseWorkUs: NOISE_WORK_US, results }) });
  console.log(md);
  console.log(files.join('\n'));
}

await main();
