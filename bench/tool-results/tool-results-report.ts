/** The tool-results bench's Markdown report (bench/tool-results/run.ts), apart from its servers so it can be tested. */
import { summarize } from '../stats.ts';

/** Milliseconds from the request to each mark, as the client read it. */
export interface Timing {
  results: number[];
  roundEnd: number;
  answerEnd: number;
}

export interface TargetTimings {
  label: string;
  timings: Timing[];
}

export interface ToolResultsReport {
  command: string;
  date: string;
  profile: string;
  runs: number;
  targets: TargetTimings[];
}

// What each column times, as a footnote names it when a request never saw it.
const MARKS = ['the 1st `tool_call.completed`', 'the 2nd `tool_call.completed`', 'the 3rd `tool_call.completed`', "round 1's `round.finished`", '`[DONE]`'];

export function toolResultsMarkdown(r: ToolResultsReport): string {
  const notes: string[] = [];
  // A mark a request never saw is NaN in its timing: the figure is from the requests that saw it,
  // starred, with a footnote saying how many did not; "n/a" where none did (it printed "NaN / NaN").
  const cell = (label: string, mark: number, values: number[]) => {
    const seen = values.filter(Number.isFinite);
    const missing = values.length - seen.length;
    if (missing > 0) {
      notes.push(`\\* ${label}: ${MARKS[mark]} never reached the client in ${missing} of ${values.length} requests: ${seen.length ? `the figure is from the other ${seen.length}` : 'no figure'}.`);
    }
    if (seen.length === 0) return 'n/a*';
    const { mean, p50 } = summarize(seen);
    return `${mean.toFixed(0)} / ${p50.toFixed(0)}${missing > 0 ? '*' : ''}`;
  };
  const rows = r.targets.map((t) => {
    const nth = (i: number) => t.timings.map((x) => [...x.results].sort((a, b) => a - b)[i] ?? Number.NaN);
    const columns = [nth(0), nth(1), nth(2), t.timings.map((x) => x.roundEnd), t.timings.map((x) => x.answerEnd)];
    return `| ${t.label} | ${columns.map((values, mark) => cell(t.label, mark, values)).join(' | ')} |`;
  });
  return [
    `# When tool results reach a streaming client — ${r.date}`,
    '',
    `Command: \`${r.command}\`  `,
    `Search workload (three parallel searches, one Mistral [TOOL_CALLS] list), simulator profile \`${r.profile}\`, ${r.runs} requests per target after one warm-up, rounds interleaved. Milliseconds from the request to each event as the client read it, mean / p50; results in the order they arrived.`,
    '',
    '| target | 1st result | 2nd result | 3rd result | round 1 finished | answer done ([DONE]) |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...notes.flatMap((note) => [note, '']),
  ].join('\n');
}
