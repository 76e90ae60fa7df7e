import { commandLine } from '../command-line.ts';
import type { Baseline } from '../git-baseline.ts';
import { provenance } from '../provenance.ts';

/** What bench/parsers/run.ts records of how a results file was made, beside its figures. */
export interface ParsersRunProvenance {
  /** The command, each argument quoted as a shell reads it back (`--only 'a|b'`). */
  command: string;
  /** This tree's commit (`+ changes` if the working tree differs): the "MB/s" columns. */
  commit: string;
  /**
   * `--baseline` as given and the commit it named when the run was made: the "before" columns. A
   * ref such as `HEAD` or `main` names another commit tomorrow, so the spec alone did not say what
   * was measured. commit is null for a folder.
   */
  baseline?: { spec: string; commit: string | null };
}

export function parsersRunProvenance(args: readonly string[], baseline?: Pick<Baseline, 'label' | 'commit'>): ParsersRunProvenance {
  return {
    command: commandLine('npx tsx bench/parsers/run.ts', args),
    commit: provenance().commit,
    ...(baseline ? { baseline: { spec: baseline.label, commit: baseline.commit ?? null } } : {}),
  };
}

/**
 * The Markdown sentence naming the commits measured: with rows re-measured by `--update` on
 * another commit (rowCommits, by case id), which rows those are and on which commit.
 */
export function commitsLine(p: Pick<ParsersRunProvenance, 'commit' | 'baseline'> & { rowCommits?: Record<string, string> }): string {
  const groups = new Map<string, string[]>();
  for (const [id, commit] of Object.entries(p.rowCommits ?? {})) groups.set(commit, [...(groups.get(commit) ?? []), id]);
  const reruns = [...groups].map(([commit, ids]) => `${ids.join(', ')} re-measured with \`--update\` on ${commit}`).join('; ');
  const before = p.baseline ? `; before = \`${p.baseline.spec}\`${p.baseline.commit && p.baseline.commit !== p.baseline.spec ? ` (${p.baseline.commit})` : ''}` : '';
  return `Commit ${p.commit}${reruns ? ` (but ${reruns})` : ''}${before}.`;
}
