import { describe, expect, it } from 'vitest';
import type { CaseResult } from '../../../bench/parsers/measure-case.ts';
import { commitsLine } from '../../../bench/parsers/run-provenance.ts';
import { mergeUpdate } from '../../../bench/parsers/update-merge.ts';

const row = (id: string, mbPerS: number) => ({ id, runs: { conveyor: { mbPerS } } }) as unknown as CaseResult;
const order = ['code-fence', 'hermes', 'mistral', 'qwen3-coder'];

describe('bench/parsers --update', () => {
  // The record read "aaa1111, rows re-run on bbb2222": neither which rows nor which commit each figure came from.
  it('names the rows re-measured on another commit, and keeps the commit of the others', () => {
    const first = { command: 'run A', commit: 'aaa1111', cases: [row('code-fence', 1), row('hermes', 2), row('qwen3-coder', 3)] };
    const merged = mergeUpdate(first, { command: 'run B', commit: 'bbb2222', cases: [row('qwen3-coder', 30), row('hermes', 20)] }, order);
    expect(merged.cases.map((r) => [r.id, (r.runs.conveyor as unknown as { mbPerS: number }).mbPerS])).toEqual([['code-fence', 1], ['hermes', 20], ['qwen3-coder', 30]]);
    expect(merged.command).toBe('run A\nrun B');
    expect(merged.commit).toBe('aaa1111');
    expect(merged.rowCommits).toEqual({ hermes: 'bbb2222', 'qwen3-coder': 'bbb2222' });
    expect(commitsLine(merged)).toBe('Commit aaa1111 (but hermes, qwen3-coder re-measured with `--update` on bbb2222).');

    // A third run: a row re-measured on the first commit again is that commit's; a new row is added in its place.
    const third = mergeUpdate(merged, { command: 'run C', commit: 'aaa1111', cases: [row('hermes', 200), row('mistral', 4)] }, order);
    expect(third.cases.map((r) => r.id)).toEqual(['code-fence', 'hermes', 'mistral', 'qwen3-coder']);
    expect(third.rowCommits).toEqual({ 'qwen3-coder': 'bbb2222' });
    expect(commitsLine({ ...third, baseline: { spec: 'HEAD~1', commit: 'ccc3333' } })).toBe(
      'Commit aaa1111 (but qwen3-coder re-measured with `--update` on bbb2222); before = `HEAD~1` (ccc3333).',
    );
  });

  it('says one commit when every row was re-measured on it', () => {
    const merged = mergeUpdate({ command: 'run A', commit: 'aaa1111', cases: [row('hermes', 2)] }, { command: 'run B', commit: 'bbb2222', cases: [row('hermes', 20)] }, order);
    expect(merged.commit).toBe('bbb2222');
    expect(merged.rowCommits).toBeUndefined();
    expect(commitsLine(merged)).toBe('Commit bbb2222.');
  });

  it('calls the rows of results without a commit (written before it was recorded) unknown', () => {
    const merged = mergeUpdate({ command: 'run A', cases: [row('code-fence', 1), row('hermes', 2)] }, { command: 'run B', commit: 'bbb2222', cases: [row('hermes', 20)] }, order);
    expect(commitsLine(merged)).toBe('Commit unknown (but hermes re-measured with `--update` on bbb2222).');
  });
});
