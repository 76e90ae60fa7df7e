import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseline } from '../../../bench/git-baseline.ts';
import { commitsLine, parsersRunProvenance } from '../../../bench/parsers/run-provenance.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

describe('bench/parsers/run.ts provenance', () => {
  // The results named only the ref given: `--baseline HEAD` recorded "HEAD", which names another
  // commit after the next commit, so the "before" columns could not be traced.
  it('records the commit --baseline HEAD named, not the word HEAD', () => {
    const before = baseline('HEAD', ['bench/command-line.ts']);
    try {
      const made = parsersRunProvenance(['--quick', '--baseline', 'HEAD'], before);
      expect(made.baseline).toEqual({ spec: 'HEAD', commit: git('rev-parse', '--short', 'HEAD') });
      expect(commitsLine(made)).toContain(`before = \`HEAD\` (${git('rev-parse', '--short', 'HEAD')})`);
    } finally {
      before.dispose();
    }
  });

  it("records this tree's resolved commit", () => {
    const made = parsersRunProvenance(['--quick']);
    expect(made.commit).toMatch(/^[0-9a-f]{7,}( \+ changes)?$/);
    expect(made.commit.startsWith(git('rev-parse', '--short', 'HEAD'))).toBe(true);
    expect(made.baseline).toBeUndefined();
    expect(commitsLine(made)).toBe(`Commit ${made.commit}.`);
  });

  it('names a folder baseline as given, with no commit', () => {
    const made = parsersRunProvenance(['--baseline', '/tmp/old'], { label: '/tmp/old' });
    expect(made.baseline).toEqual({ spec: '/tmp/old', commit: null });
    expect(commitsLine(made)).toMatch(/; before = `\/tmp\/old`\.$/);
  });

  // The script's own quoting wrapped `it's` as 'it's': pasted back, the shell waited for a closing quote.
  it('prints an argument holding a quote so that a shell reads it back as it was given', () => {
    const args = ['--only', "it's|a b", '--quick'];
    const { command } = parsersRunProvenance(args);
    expect(command).toBe(`npx tsx bench/parsers/run.ts --only 'it'\\''s|a b' --quick`);
    const words = command.replace(/^npx tsx bench\/parsers\/run\.ts /, '');
    const readBack = execFileSync('sh', ['-c', `for w in ${words}; do printf '%s\\n' "$w"; done`], { encoding: 'utf8' });
    expect(readBack.split('\n').slice(0, -1)).toEqual(args);
  });
});
