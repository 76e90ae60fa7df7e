import { describe, expect, it } from 'vitest';
import type { SectionResult } from '../../bench/extra-sections.ts';
import { markdownReport } from '../../bench/report.ts';

const origin = { command: 'npm run bench -- sweep overhead', commit: 'abc1234', cpus: '2 × test', loadavg: [1, 1, 1] };

function section(name: SectionResult['name'], markdown: string): SectionResult {
  return { name, markdown, json: {}, wallS: 1 };
}

describe('markdownReport', () => {
  it("has one title: each section's own headings sit one level below it", () => {
    const markdown = markdownReport({
      origin,
      reports: [],
      sections: [section('sweep', '# t/g sweep\n\ntext with a # inside\n\n## Points'), section('overhead', '# Gateway overhead\n\n###### deepest')],
      wallS: 2,
    });
    const headings = markdown.split('\n').filter((line) => /^#+ /.test(line));
    expect(headings).toEqual([expect.stringMatching(/^# Conveyor benchmark — /), '## t/g sweep', '### Points', '## Gateway overhead', '###### deepest']);
    expect(markdown).toContain('text with a # inside');
  });
});
