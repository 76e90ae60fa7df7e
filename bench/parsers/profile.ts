/**
 * Runs one case's parser in a loop, for a profiler:
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/parsers/profile.ts hermes [seconds] [--like-bench]
 * then open the .cpuprofile in Chrome DevTools (Performance) or speedscope. With --like-bench the
 * same parser code first also parses the text in 4-character deltas and whole, as in run.ts's
 * child processes: the type feedback those leave (other string shapes, the step path for whole
 * text) changes what the JIT makes of the token path, so this profiles what the bench times.
 */
import * as current from '../../parsers/index.ts';
import { buildCases } from './cases.ts';
import { conveyorRun, prepare, type ParsersModule } from './drivers.ts';

const likeBench = process.argv.includes('--like-bench');
const [id = 'hermes', seconds = '5'] = process.argv.slice(2).filter((a) => a !== '--like-bench');
const c = buildCases().find((x) => x.id === id);
if (c === undefined) throw new Error(`no case "${id}"; known: ${buildCases().map((x) => x.id).join(', ')}`);
const p = prepare(c);
const run = conveyorRun(current as unknown as ParsersModule, p);
if (likeBench && c.toolCalls === undefined) {
  // run.ts's order: token deltas warmed first, then the other splits.
  for (const r of [run, conveyorRun(current as unknown as ParsersModule, p, 'chars4'), conveyorRun(current as unknown as ParsersModule, p, 'whole')]) {
    const until = performance.now() + 1000;
    while (performance.now() < until) r();
  }
}
// In a function, not at module top level: top-level code stays in V8's baseline tier.
function loop(): { runs: number; events: number } {
  const until = performance.now() + Number(seconds) * 1000;
  let runs = 0;
  let events = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) events += run();
    runs += 100;
  }
  return { runs, events };
}
const cpu0 = process.cpuUsage();
const { runs, events } = loop();
const used = process.cpuUsage(cpu0);
// CPU time, not wall time: on a shared box the wall clock also counts other jobs' turns.
const ns = ((used.user + used.system) * 1000) / runs;
console.log(`${id}: ${runs} runs, ${((p.bytes / ns) * 1e3).toFixed(1)} MB/s, ${(ns / p.tokens).toFixed(0)} ns/token of CPU time (${events} events)`);
