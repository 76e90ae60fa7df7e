/**
 * Child process of run.ts: measures one case, so that every format gets a fresh JIT (as in a
 * gateway serving one model) and the order of the formats cannot skew the numbers.
 * argv: CASE_INDEX [--quick] [--baseline DIR]; the result goes back over IPC.
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import * as current from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { buildCases } from './cases.ts';
import { alternativeRun, conveyorRun, prepare, type ParsersModule, type Run } from './drivers.ts';
import { measureInterleaved, type Measured } from './measure.ts';

export interface CaseResult {
  id: string;
  format: string;
  bytes: number;
  tokens: number;
  deltas: number;
  /** Calls the parser completed (a check that the corpus parses as intended). */
  calls: number;
  /**
   * Keyed by run name: `conveyor` (one token per delta), `before` (the same with --baseline's
   * parsers), `chars4` (4-character deltas), `whole` (one delta), `partial-json` (the alternative).
   */
  runs: Record<string, Measured>;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const index = Number(args[0]);
  const quick = args.includes('--quick');
  const baselineAt = args.indexOf('--baseline');
  const c = buildCases()[index];
  if (c === undefined) throw new Error(`no case ${args[0]}`);
  const p = prepare(c);

  const impl = current as unknown as ParsersModule;
  const calls = check(impl, p);
  const runs: Record<string, Run> = { conveyor: conveyorRun(impl, p) };
  if (baselineAt >= 0) {
    const dir = path.resolve(args[baselineAt + 1]!);
    const baseline = (await import(pathToFileURL(path.join(dir, 'parsers/index.ts')).href)) as ParsersModule;
    check(baseline, p);
    runs.before = conveyorRun(baseline, p);
  }
  if (c.toolCalls === undefined) {
    runs.chars4 = conveyorRun(impl, p, 'chars4');
    runs.whole = conveyorRun(impl, p, 'whole');
  }
  const alternative = alternativeRun(p);
  if (alternative) runs['partial-json'] = alternative;

  const measured = measureInterleaved(runs, quick ? { warmupMs: 150, batchMs: 20, reps: 5 } : { warmupMs: 1000, batchMs: 100, reps: 15 });
  const result: CaseResult = { id: c.id, format: c.format, bytes: p.bytes, tokens: p.tokens, deltas: p.steps.length, calls, runs: measured };
  process.send!(result);
}

/** The corpus must parse as meant: every call completes, nothing is malformed. */
function check(impl: ParsersModule, p: ReturnType<typeof prepare>): number {
  const events: ParserEvent[] = [];
  const parser = p.case.toolCalls ? impl.createOpenAIToolCallsParser() : p.case.reasoning ? impl.withReasoning(impl.createParser(p.case.format)) : impl.createParser(p.case.format);
  for (const s of p.steps) {
    if ('text' in s) events.push(...parser.push(s.text));
    else events.push(...(parser as ReturnType<ParsersModule['createOpenAIToolCallsParser']>).pushToolCallDelta(s));
  }
  events.push(...parser.end());
  const bad = coalesceText(events).filter((e) => e.type === 'malformed');
  if (bad.length > 0) throw new Error(`${p.case.id}: ${JSON.stringify(bad)}`);
  return events.filter((e) => e.type === 'call-end').length;
}

await main();
