import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { barChart, cdfChart, lineChart } from '../../bench/charts/svg-charts.ts';
import { requestLanes, timelineChart } from '../../bench/charts/timeline-chart.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';

/** Strict well-formedness walk: every tag closes in order, every `&` starts an entity, no stray `<`. */
function assertWellFormedXml(svg: string): void {
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = svg.indexOf('<');
  expect(svg.slice(0, i).trim()).toBe('');
  while (i < svg.length) {
    if (svg[i] === '<') {
      tag.lastIndex = i;
      const m = tag.exec(svg);
      if (!m) throw new Error(`malformed tag at ${i}: ${svg.slice(i, i + 60)}`);
      const [, close, name, , selfClose] = m;
      if (close) {
        expect(stack.pop(), `closing </${name}> at ${i}`).toBe(name);
      } else if (!selfClose) stack.push(name!);
      i = tag.lastIndex;
    } else {
      const next = svg.indexOf('<', i);
      const text = svg.slice(i, next === -1 ? svg.length : next);
      for (const amp of text.matchAll(/&/g)) expect(text.slice(amp.index).match(/^&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/i), `entity at ${i}`).not.toBeNull();
      expect(text).not.toContain('>');
      i = next === -1 ? svg.length : next;
    }
  }
  expect(stack).toEqual([]);
}

/** The SVG as an XML parser sees it: root element name and all text content, entities decoded. */
function parseXml(svg: string): { root: string; text: string; elements: string[] } {
  const elements: string[] = [];
  let text = '';
  const parser = new Parser({ onopentag: (name) => elements.push(name), ontext: (t) => (text += t) }, { xmlMode: true, decodeEntities: true });
  parser.write(svg);
  parser.end();
  return { root: elements[0] ?? '', text, elements };
}

const tricky = 'A&B <on> "quoted" \'x\'';

describe('svg charts', () => {
  it('the well-formedness walk itself rejects broken markup', () => {
    expect(() => assertWellFormedXml('<svg><g></svg>')).toThrow();
    expect(() => assertWellFormedXml('<svg><text>a & b</text></svg>')).toThrow();
    expect(() => assertWellFormedXml('<svg><text x=1>a</text></svg>')).toThrow();
    expect(() => assertWellFormedXml('<svg><text>a &amp; b</text><g/></svg>')).not.toThrow();
  });

  it('lineChart: well-formed SVG with title, axis labels and every series label (text escaped)', () => {
    const svg = lineChart({
      title: 'Speedup vs t/g',
      xLabel: 't/g',
      yLabel: 'speedup',
      logX: true,
      series: [
        { label: 'bound', style: 'line', points: [0.05, 0.5, 1, 5, 20].map((x) => ({ x, y: (1 + x) / Math.max(1, x) })) },
        { label: tricky, style: 'points', points: [{ x: 0.7, y: 1.6 }, { x: 3, y: 1.3 }, { x: 0, y: 1 }, { x: 2, y: NaN }] },
      ],
    });
    assertWellFormedXml(svg);
    const xml = parseXml(svg);
    expect(xml.root).toBe('svg');
    for (const label of ['Speedup vs t/g', 't/g', 'speedup', 'bound', tricky]) expect(xml.text).toContain(label);
    expect(xml.elements).toContain('polyline');
    // Two drawable markers: x = 0 cannot sit on a log axis and NaN cannot be drawn.
    expect(xml.elements.filter((e) => e === 'circle').length - 1).toBe(2);
  });

  it('barChart: one bar per value, error whiskers, group and bar labels', () => {
    const svg = barChart({
      title: 'Latency by workload',
      yLabel: 'ms',
      groups: [
        { label: 'codegen', bars: [{ label: 'partial off', value: 900, error: 30 }, { label: 'partial on', value: 700, error: 20 }, { label: 'bound', value: 650 }] },
        { label: tricky, bars: [{ label: 'partial off', value: 400, error: 10 }, { label: 'partial on', value: 260 }] },
      ],
    });
    assertWellFormedXml(svg);
    const xml = parseXml(svg);
    for (const label of ['Latency by workload', 'ms', 'codegen', tricky, 'partial off', 'partial on', 'bound']) expect(xml.text).toContain(label);
    // 5 bars + 1 background + 3 legend swatches; whiskers only where an error was given.
    expect(xml.elements.filter((e) => e === 'rect')).toHaveLength(9);
    expect(xml.elements.filter((e) => e === 'path')).toHaveLength(3);
  });

  it('barChart: a whisker wider than its bar stops at zero, and no tick goes below it; tooltips are rounded', () => {
    const svg = barChart({ title: 'Spread', yLabel: 'ms', groups: [{ label: 'calculator', bars: [{ label: 'partial on', value: 7174.81234, error: 8273.4567 }] }] });
    assertWellFormedXml(svg);
    expect(svg).not.toMatch(/>-\d/);
    expect(svg).toContain('calculator — partial on: 7174.8 ± 8273.5');
  });

  it('cdfChart: one step line per non-empty series, y axis from 0 to 1', () => {
    const svg = cdfChart({
      title: 'Latency CDF',
      xLabel: 'latency (ms)',
      series: [
        { label: 'off', values: [900, 880, 950, 1010] },
        { label: 'on', values: [700, 640, 720] },
        { label: 'empty', values: [] },
      ],
    });
    assertWellFormedXml(svg);
    const xml = parseXml(svg);
    for (const label of ['Latency CDF', 'latency (ms)', 'off', 'on', 'empty']) expect(xml.text).toContain(label);
    expect(xml.elements.filter((e) => e === 'path')).toHaveLength(2);
    expect(xml.text).toContain('0.5');
  });

  it('draws an empty chart (no series, or nothing drawable) without NaN coordinates', () => {
    for (const svg of [
      lineChart({ title: 'empty', xLabel: 'x', yLabel: 'y', series: [] }),
      lineChart({ title: 'log', xLabel: 'x', yLabel: 'y', logX: true, series: [{ label: 's', style: 'line', points: [{ x: -1, y: 2 }] }] }),
      barChart({ title: 'bars', yLabel: 'ms', groups: [] }),
      cdfChart({ title: 'cdf', xLabel: 'ms', logX: true, series: [{ label: 's', values: [0, -3] }] }),
    ]) {
      assertWellFormedXml(svg);
      expect(svg).not.toMatch(/NaN|Infinity/);
      expect(parseXml(svg).text).toContain('no data');
    }
  });
});

/** A two-round request whose python tool starts at its first statement, mid-decode. */
const partialRun: TimelineEvent[] = [
  { t: 0, type: 'request-start' },
  { t: 1, type: 'round-start', round: 1 },
  { t: 21, type: 'first-token', round: 1 },
  { t: 120, type: 'call-start', round: 1, callId: 'c1', detail: 'python' },
  { t: 300, type: 'piece', round: 1, callId: 'c1', detail: 'line 1' },
  { t: 301, type: 'tool-start', round: 1, callId: 'c1', detail: 'python' },
  { t: 500, type: 'piece', round: 1, callId: 'c1', detail: 'line 2' },
  { t: 800, type: 'decode-end', round: 1, detail: 'stop' },
  { t: 900, type: 'tool-end', round: 1, callId: 'c1', detail: 'ok' },
  { t: 901, type: 'round-end', round: 1, detail: 'stop' },
  { t: 902, type: 'round-start', round: 2 },
  { t: 930, type: 'first-token', round: 2 },
  { t: 1200, type: 'decode-end', round: 2, detail: 'stop' },
  { t: 1201, type: 'round-end', round: 2, detail: 'stop' },
  { t: 1210, type: 'request-end', detail: 'stop' },
];

describe('timelineChart', () => {
  it('reads the lanes of a request: first-token waits, decodes, pieces, tool bars, the end', () => {
    const lanes = requestLanes('on', partialRun);
    expect(lanes.waits.map((b) => [b.start, b.end])).toEqual([[1, 21], [902, 930]]);
    expect(lanes.decodes.map((b) => [b.start, b.end])).toEqual([[21, 800], [930, 1200]]);
    expect(lanes.pieces).toEqual([300, 500]);
    expect(lanes.toolRows.map((row) => row.map((b) => [b.start, b.end, b.label]))).toEqual([[[301, 900, 'python']]]);
    expect(lanes.rejects).toEqual([]);
    expect(lanes.endMs).toBe(1210);
  });

  it('packs overlapping calls into separate rows and ends a rejected call at its rejection', () => {
    const events: TimelineEvent[] = [
      { t: 0, type: 'round-start', round: 1 },
      { t: 10, type: 'first-token', round: 1 },
      { t: 100, type: 'tool-start', round: 1, callId: 'a', detail: 'search' },
      { t: 150, type: 'piece', round: 1, callId: 'a', detail: 'query' },
      { t: 200, type: 'tool-start', round: 1, callId: 'b', detail: 'search' },
      { t: 300, type: 'tool-end', round: 1, callId: 'a', detail: 'ok' },
      { t: 350, type: 'tool-start', round: 1, callId: 'c', detail: 'local_news' },
      { t: 360, type: 'abort', round: 1, callId: 'c', detail: 'rejected: location must be "City, ST"' },
      { t: 400, type: 'tool-end', round: 1, callId: 'b', detail: 'ok' },
      { t: 420, type: 'decode-end', round: 1, detail: 'abort' },
      { t: 430, type: 'request-end', detail: 'stop' },
    ];
    const lanes = requestLanes('off', events);
    expect(lanes.toolRows.map((row) => row.map((b) => `${b.label}@${b.start}-${b.end}`))).toEqual([
      ['search@100-300', 'local_news@350-360'],
      ['search@200-400'],
    ]);
    expect(lanes.rejects).toEqual([360]);
    // The first search opened at its call's start and was fed when its query closed; the others had no piece.
    expect(lanes.toolRows.flat().map((b) => `${b.label}@${b.inputAt}`)).toEqual(['search@150', 'local_news@350', 'search@200']);
  });

  it('draws one panel per workload, both requests on one axis, as well-formed SVG', () => {
    const sequential = partialRun.map((e) => (e.type === 'tool-start' ? { ...e, t: 801 } : e));
    const svg = timelineChart({
      title: 'Where the time goes',
      panels: [
        { label: 'codegen', requests: [{ label: 'off (sequential)', events: sequential }, { label: 'on (partial)', events: partialRun }] },
        { label: tricky, requests: [{ label: 'off (sequential)', events: [] }, { label: 'on (partial)', events: [] }] },
      ],
    });
    assertWellFormedXml(svg);
    expect(svg).not.toMatch(/NaN|Infinity/);
    const xml = parseXml(svg);
    expect(xml.root).toBe('svg');
    for (const label of ['Where the time goes', 'codegen', tricky, 'off (sequential)', 'on (partial)', 'tool running', '1210 ms']) expect(xml.text).toContain(label);
    // Background + 4 legend swatches + per drawn request (2): 2 waits + 2 decodes + 1 tool bar.
    expect(xml.elements.filter((e) => e === 'rect')).toHaveLength(1 + 4 + 2 * 5);
    expect(svg).toContain('python: 801–900 ms (99 ms)');
    expect(svg).toContain('python: 301–900 ms (599 ms)');
  });

  it("writes a request's total left of its end line when the request reaches the axis's end, not over its last bar", () => {
    // 2000 ms is a tick: the axis ends where the request does.
    const events = partialRun.map((e) => (e.type === 'request-end' ? { ...e, t: 2000 } : e.type === 'decode-end' && e.round === 2 ? { ...e, t: 1990 } : e));
    const short = partialRun;
    const svg = timelineChart({ title: 't', panels: [{ label: 'codegen', requests: [{ label: 'long', events }, { label: 'short', events: short }] }] });
    const label = (text: string) => new RegExp(`<text x="([\\d.]+)" y="[\\d.]+"([^>]*)>${text}</text>`).exec(svg);
    const endLine = /<line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="#333333" stroke-dasharray/.exec(svg)!;
    const long = label('2000 ms')!;
    expect(long[2]).toContain('text-anchor="end"');
    expect(Number(long[1])).toBeLessThan(Number(endLine[1]));
    // One that ends mid-axis keeps its label right of its line.
    expect(label('1210 ms')![2]).not.toContain('text-anchor');
  });
});
