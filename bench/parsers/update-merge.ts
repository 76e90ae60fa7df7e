import type { CaseResult } from './measure-case.ts';

/** What `--update` reads back from the day's results and writes again. */
export interface ParsersRows {
  /** Every command that measured a row of these results, one a line. */
  command: string;
  /** The commit the rows were measured on, but those in rowCommits. */
  commit: string;
  /**
   * Rows re-measured with `--update` on another commit than `commit`, by case id. The record said
   * "X, rows re-run on Y", which named neither the rows nor which of X and Y a figure came from.
   */
  rowCommits?: Record<string, string>;
  cases: CaseResult[];
}

/**
 * An `--update` run's rows put into the earlier results: the fresh rows replace theirs, the others
 * stay, each row keeps the commit it was measured on, and the rows stay in `order` (the case ids).
 * Results written before 2026-12-03 may lack `commit` (its rows' commit is then "unknown") or hold
 * the old "X, rows re-run on Y" in it (kept as it was: which rows it meant is not recorded).
 */
export function mergeUpdate(previous: Partial<ParsersRows> & Pick<ParsersRows, 'command' | 'cases'>, fresh: ParsersRows, order: readonly string[]): ParsersRows {
  const byId = new Map(previous.cases.map((r) => [r.id, r]));
  for (const r of fresh.cases) byId.set(r.id, r);
  const cases = [...byId.values()].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  const commit = previous.commit ?? 'unknown';
  const rowCommits = { ...previous.rowCommits };
  for (const r of fresh.cases) {
    if (fresh.commit === commit) delete rowCommits[r.id];
    else rowCommits[r.id] = fresh.commit;
  }
  const command = `${previous.command}\n${fresh.command}`;
  // Every row now from one commit (all re-measured there): that commit is the results' commit.
  const commits = new Set(cases.map((r) => rowCommits[r.id] ?? commit));
  if (commits.size === 1) return { command, commit: [...commits][0]!, cases };
  // In the rows' order, so that the report lists them as the table does.
  const ordered = Object.fromEntries(cases.filter((r) => rowCommits[r.id] !== undefined).map((r) => [r.id, rowCommits[r.id]!]));
  return { command, commit, ...(Object.keys(ordered).length ? { rowCommits: ordered } : {}), cases };
}
