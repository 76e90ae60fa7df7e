/**
 * What `upstream.continuousUsage` costs the gateway: its CPU per 1,000 tokens for the same
 * 200-token plain streams at N concurrent streams, with the upstream's usage on every chunk
 * (`stream_options.continuous_usage_stats`, which a client may also ask for itself) and without,
 * rounds alternating A B B A … in one run. Prints the Markdown table and writes it with the JSON.
 *
 *   npx tsx bench/overhead/continuous-usage-cost.ts [--seconds 8] [--streams 100] [--rounds 6] [--out DIR]
 *     → bench/results/<date>-continuous-usage-cost.{md,json}
 */
import { Command } from 'commander';
import { Agent } from 'undici';
import { wholeNumber } from '../../gateway/commands/number-options.ts';
import { commandLine } from '../command-line.ts';
import { provenance, provenanceLine } from '../provenance.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { SIM_MODEL, spawnOurGateway, spawnOverheadSim } from './bench-servers.ts';
import { timedChatStream } from './timed-chat-stream.ts';

const program = new Command()
  .name('continuous-usage-cost')
  .description('Gateway CPU per 1,000 tokens with and without the upstream\'s usage on every chunk.')
  .option('--seconds <s>', 'length of each round', wholeNumber(1), 8)
  .option('--streams <n>', 'streams in flight', wholeNumber(1), 100)
  .option('--rounds <n>', 'rounds, alternating A B B A', wholeNumber(2), 6)
  .option('--out <dir>', 'where result files go', 'bench/results');
// A wrong command line as every bench script answers it: one line, status 2 (commander's own was
// `error: …` and status 1).
const { seconds, streams, rounds, out } = usageErrorsExit2(program).parse().opts<{ seconds: number; streams: number; rounds: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run. It took
// no --out until 2026-12-03 and printed its table only: the results cited were copied by hand.
checkOutOption(program, out);
const command = commandLine('npx tsx bench/overhead/continuous-usage-cost.ts', process.argv.slice(2));

const plain = { model: SIM_MODEL, stream: true, max_tokens: 200, messages: [{ role: 'user', content: 'overhead-bench-plain: write a paragraph about gateways.' }] };
const bodies = { plain: JSON.stringify(plain), continuous: JSON.stringify({ ...plain, stream_options: { include_usage: true, continuous_usage_stats: true } }) };
type Mode = keyof typeof bodies;

const sim = await spawnOverheadSim();
const gateway = await spawnOurGateway(sim.url);
try {
  const chat = { url: gateway.url, dispatcher: new Agent({ keepAliveTimeout: 30_000 }) };
  const totals: Record<Mode, { cpuMs: number; tokens: number; rounds: number[] }> = {
    plain: { cpuMs: 0, tokens: 0, rounds: [] },
    continuous: { cpuMs: 0, tokens: 0, rounds: [] },
  };
  const round = async (mode: Mode) => {
    const end = performance.now() + seconds * 1000;
    const before = gateway.cpuMs();
    let tokens = 0;
    await Promise.all(
      Array.from({ length: streams }, async () => {
        while (performance.now() < end) {
          const timing = await timedChatStream(chat, bodies[mode]);
          tokens += timing.tokens;
        }
      }),
    );
    const cpuMs = gateway.cpuMs() - before;
    totals[mode].cpuMs += cpuMs;
    totals[mode].tokens += tokens;
    totals[mode].rounds.push((1000 * cpuMs) / tokens);
  };
  await round('plain'); // warm-up, not counted
  totals.plain = { cpuMs: 0, tokens: 0, rounds: [] };
  for (let r = 0; r < rounds; r++) for (const mode of (r % 2 === 0 ? ['plain', 'continuous'] : ['continuous', 'plain']) as Mode[]) await round(mode);

  const perK = (mode: Mode) => (1000 * totals[mode].cpuMs) / totals[mode].tokens;
  const origin = { command, date: new Date().toISOString(), node: process.version, ...provenance() };
  const markdown = [
    `# Usage on every chunk: gateway CPU per 1,000 tokens, ${origin.date.slice(0, 10)}`,
    '',
    '```sh',
    command,
    '```',
    '',
    `Node ${origin.node}, ${provenanceLine(origin)}. ` +
      `${streams} streams, ${rounds} rounds of ${seconds} s per mode, alternating, after one warm-up round; gateway CPU from /proc (10 ms ticks).`,
    '',
    '| upstream usage | gateway CPU per 1k tokens (ms) | per round | tokens |',
    '|---|---:|---|---:|',
    ...(['plain', 'continuous'] as Mode[]).map(
      (mode) => `| ${mode === 'plain' ? 'last chunk only' : 'every chunk'} | ${perK(mode).toFixed(1)} | ${totals[mode].rounds.map((v) => v.toFixed(1)).join(', ')} | ${totals[mode].tokens} |`,
    ),
    '',
    `Every chunk / last chunk only: **${(perK('continuous') / perK('plain')).toFixed(3)}**`,
    '',
  ].join('\n');
  const json = { ...origin, streams, rounds, seconds, cpuPer1kTokensMs: { plain: perK('plain'), continuous: perK('continuous') }, totals };
  const files = writeResultFiles(out, 'continuous-usage-cost', { '.md': markdown, '.json': jsonText(json) });
  console.log(markdown);
  console.log(`results: ${files.join(', ')}`);
} finally {
  await gateway.close();
  await sim.close();
}
