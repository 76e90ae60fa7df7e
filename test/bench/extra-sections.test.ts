import { describe, expect, it, vi } from 'vitest';

// A stand-in for the sweep (the real one takes ~15 s): only the shape of its result matters here.
vi.mock('../../bench/sweep/run-sweep.ts', () => ({
  runSweep: async () => ({ points: [{ ratio: 1 }], overheadMs: 20, runs: 2, command: 'npm run bench -- sweep', markdown: '## sweep table', svg: '<svg>sweep</svg>' }),
}));

// The overhead sections' stand-ins write the command they are given under their title, as
// overheadMarkdown and parserCpuMarkdown do, and none where they are given none.
const titled = (title: string) => async (o: { command?: string }) => ({ markdown: `# ${title}\n\n${o.command === undefined ? '' : `Command: \`${o.command}\``}`, json: {} });
vi.mock('../../bench/overhead/run-overhead.ts', () => ({ runOverhead: titled('Gateway overhead') }));
vi.mock('../../bench/overhead/parser-cpu.ts', () => ({ runParserCpu: titled('Parser CPU') }));

const { runExtraSections } = await import('../../bench/extra-sections.ts');
const { markdownReport, writeBenchFiles } = await import('../../bench/report.ts');

describe('runExtraSections', () => {
  it("keeps the sweep's Markdown and SVG out of its JSON: they are files of their own", async () => {
    const { results, failures } = await runExtraSections(['sweep'], { quick: true, command: 'npm run bench -- sweep --quick' });
    expect(failures).toEqual([]);
    const [sweep] = results;
    expect(sweep!.markdown).toBe('## sweep table');
    expect(sweep!.svg).toBe('<svg>sweep</svg>');
    expect(sweep!.json).toEqual({ points: [{ ratio: 1 }], overheadMs: 20, runs: 2, command: 'npm run bench -- sweep' });

    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'conveyor-bench-sections-'));
    try {
      const origin = { command: 'npm run bench -- sweep --quick', commit: 'abc1234', cpus: '2 × test', loadavg: [1, 1, 1] };
      const files = writeBenchFiles(dir, 'sections', { origin, reports: [], sections: results, wallS: 1, markdown: '# run' });
      const json = readFileSync(files.find((f) => f.endsWith('.json'))!, 'utf8');
      expect(json).not.toContain('<svg');
      // A run of sections alone says where it came from too.
      expect(JSON.parse(json).origin).toEqual(origin);
      // The section's Markdown is kept once (beside its JSON), not a second time inside it.
      expect(json.split('## sweep table')).toHaveLength(2);
      expect(files.some((f) => f.endsWith('-sweep.svg'))).toBe(true);
      const markdown = markdownReport({ origin, reports: [], sections: results, wallS: 1 });
      expect(markdown).toContain('Command: `npm run bench -- sweep --quick`');
      expect(markdown).toContain('Commit abc1234; 2 × test, load average at the end 1 / 1 / 1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The sweep's and the load's chapters said which command made them; the overhead's and the
  // parser-cpu's did not, so a reader of one chapter could not tell how to run it again.
  it('gives the overhead and parser-cpu sections the command line that reproduces them, as the sweep and the load', async () => {
    const command = 'npm run bench -- overhead parser-cpu --quick';
    const { results, failures } = await runExtraSections(['overhead', 'parser-cpu'], { quick: true, command });
    expect(failures).toEqual([]);
    expect(results.map((r) => r.name)).toEqual(['overhead', 'parser-cpu']);
    for (const r of results) expect(r.markdown).toContain(`Command: \`${command}\``);
  });
});
