import type { TimelineEvent } from '../../gateway/timeline.ts';
import { esc, f, linearScale, tickLabel } from './svg-frame.ts';

/**
 * The paper's Figures 4 and 7 for measured requests: for each workload, one request with partial
 * execution off and one with it on, drawn on one time axis. A lane for the model (each round's
 * wait for its first token, then its decode, with a tick where a piece went to a tool) and lanes
 * for the tools (one bar per call, from the moment the tool was opened, pale until its first
 * input arrived, to its result), so the overlap that partial execution buys, or its absence, can
 * be seen at a glance.
 */

export interface TimelinePanel {
  /** The workload's name, drawn above its two requests. */
  label: string;
  requests: Array<{ label: string; events: readonly TimelineEvent[] }>;
}

interface Bar {
  start: number;
  end: number;
  label: string;
  /** A tool's first input (a piece, or the whole call): before it the tool was open but idle. */
  inputAt?: number;
}

interface RequestLanes {
  label: string;
  waits: Bar[];
  decodes: Bar[];
  pieces: number[];
  /** Tool bars, packed into as few rows as never overlap. */
  toolRows: Bar[][];
  rejects: number[];
  endMs: number;
}

const WIDTH = 900;
const LEFT = 180;
const RIGHT = WIDTH - 24;
const LANE = 16;
const LANE_GAP = 4;
const COLORS = { wait: '#BFD7EA', decode: '#0072B2', toolIdle: '#F2C4A5', tool: '#D55E00', piece: '#FFFFFF', reject: '#CC0000' } as const;

/** One SVG document, one panel per workload, each with its own time axis (workloads differ tenfold). */
export function timelineChart(o: { title: string; panels: readonly TimelinePanel[] }): string {
  const body: string[] = [];
  let y = 70;
  for (const panel of o.panels) y = drawPanel(body, panel, y) + 28;
  const height = y + 8;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${esc(o.title)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600">${esc(o.title)}</text>`,
    ...legendRow(44),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** Reads the lanes of one request from its timeline events. */
export function requestLanes(label: string, events: readonly TimelineEvent[]): RequestLanes {
  const endMs = events.find((e) => e.type === 'request-end')?.t ?? Math.max(0, ...events.map((e) => e.t));
  const waits: Bar[] = [];
  const decodes: Bar[] = [];
  for (const start of events.filter((e) => e.type === 'round-start')) {
    const inRound = events.filter((e) => e.round === start.round);
    const first = inRound.find((e) => e.type === 'first-token')?.t;
    const end = inRound.find((e) => e.type === 'decode-end')?.t ?? inRound.find((e) => e.type === 'round-end')?.t ?? endMs;
    const name = `round ${start.round}`;
    if (first === undefined) {
      waits.push({ start: start.t, end, label: `${name}: no token` });
      continue;
    }
    waits.push({ start: start.t, end: first, label: `${name}: waiting for its first token` });
    decodes.push({ start: first, end, label: `${name}: decode` });
  }
  const tools: Bar[] = [];
  for (const begin of events.filter((e) => e.type === 'tool-start')) {
    const ofCall = events.filter((e) => e.callId === begin.callId);
    const done = ofCall.find((e) => (e.type === 'tool-end' || e.type === 'abort') && e.t >= begin.t);
    const end = done?.t ?? endMs;
    // Partial execution opens a tool when its call starts; its input comes as the model writes it.
    // Sequentially, every piece was decoded before the tool opened.
    const input = ofCall.find((e) => e.type === 'piece' || e.type === 'call-end')?.t;
    const inputAt = Math.min(end, Math.max(begin.t, input ?? begin.t));
    tools.push({ start: begin.t, end, label: begin.detail ?? 'tool', inputAt });
  }
  return {
    label,
    waits,
    decodes,
    pieces: events.filter((e) => e.type === 'piece').map((e) => e.t),
    toolRows: packRows(tools),
    rejects: events.filter((e) => e.type === 'abort' && e.detail?.startsWith('rejected')).map((e) => e.t),
    endMs,
  };
}

/** Interval partitioning: each bar goes to the first row whose last bar ended before it starts. */
function packRows(bars: Bar[]): Bar[][] {
  const rows: Bar[][] = [];
  for (const bar of [...bars].sort((a, b) => a.start - b.start)) {
    const row = rows.find((r) => r[r.length - 1]!.end <= bar.start);
    if (row) row.push(bar);
    else rows.push([bar]);
  }
  return rows;
}

function drawPanel(out: string[], panel: TimelinePanel, top: number): number {
  const requests = panel.requests.map((r) => requestLanes(r.label, r.events));
  const x = linearScale(0, Math.max(1, ...requests.map((r) => r.endMs)), [LEFT, RIGHT], { zero: true });
  out.push(`<text x="12" y="${top}" font-size="13" font-weight="600">${esc(panel.label)}</text>`);
  let y = top + 10;
  const gridTop = y;
  const rows: string[] = [];
  for (const r of requests) {
    const lanes = 1 + Math.max(1, r.toolRows.length);
    const height = lanes * (LANE + LANE_GAP);
    rows.push(`<text x="12" y="${f(y + LANE - 3)}">${esc(r.label)}</text>`);
    rows.push(`<text x="${LEFT - 8}" y="${f(y + LANE - 3)}" text-anchor="end" fill="#555555">model</text>`);
    rows.push(`<text x="${LEFT - 8}" y="${f(y + LANE + LANE_GAP + LANE - 3)}" text-anchor="end" fill="#555555">tools</text>`);
    for (const b of r.waits) rows.push(rect(x.map, b, y, COLORS.wait));
    for (const b of r.decodes) rows.push(rect(x.map, b, y, COLORS.decode));
    for (const t of r.pieces) rows.push(`<line x1="${f(x.map(t))}" x2="${f(x.map(t))}" y1="${f(y + 3)}" y2="${f(y + LANE - 3)}" stroke="${COLORS.piece}" stroke-width="1"/>`);
    r.toolRows.forEach((row, i) => {
      for (const b of row) rows.push(toolRect(x.map, b, y + (i + 1) * (LANE + LANE_GAP)));
    });
    for (const t of r.rejects) rows.push(`<line x1="${f(x.map(t))}" x2="${f(x.map(t))}" y1="${f(y - 2)}" y2="${f(y + height - LANE_GAP + 2)}" stroke="${COLORS.reject}" stroke-width="2"><title>rejected at ${t.toFixed(0)} ms</title></line>`);
    const endX = x.map(r.endMs);
    rows.push(`<line x1="${f(endX)}" x2="${f(endX)}" y1="${f(y - 2)}" y2="${f(y + height - LANE_GAP + 2)}" stroke="#333333" stroke-dasharray="3 2"/>`);
    rows.push(endLabel(`${r.endMs.toFixed(0)} ms`, endX, y));
    y += height + 6;
  }
  const grid = x.ticks.map((t) => `<line x1="${f(x.map(t))}" x2="${f(x.map(t))}" y1="${f(gridTop - 2)}" y2="${f(y)}" stroke="#e4e4e4"/>`);
  const labels = x.ticks.map((t) => `<text x="${f(x.map(t))}" y="${f(y + 14)}" text-anchor="middle" fill="#333333">${esc(tickLabel(t))}</text>`);
  out.push(...grid, ...rows, ...labels, `<text x="${LEFT - 12}" y="${f(y + 14)}" text-anchor="end" fill="#555555">ms since arrival</text>`);
  return y + 14;
}

/**
 * A request's total beside its end line: right of it where it fits, else left of it, in the tools
 * lane (empty by then: the last round is decoding) and on a white ground, never over the last bar.
 */
function endLabel(text: string, endX: number, y: number): string {
  const width = text.length * 6.5;
  if (endX + 4 + width <= WIDTH - 4) return `<text x="${f(endX + 4)}" y="${f(y + LANE - 3)}" fill="#333333">${esc(text)}</text>`;
  return `<text x="${f(endX - 4)}" y="${f(y + LANE + LANE_GAP + LANE - 3)}" text-anchor="end" fill="#333333" stroke="#ffffff" stroke-width="3" paint-order="stroke">${esc(text)}</text>`;
}

function rect(map: (v: number) => number, b: Bar, y: number, fill: string, labelled = false): string {
  const x0 = map(b.start);
  const w = Math.max(1, map(b.end) - x0);
  const tip = `<title>${esc(`${b.label}: ${b.start.toFixed(0)}–${b.end.toFixed(0)} ms (${(b.end - b.start).toFixed(0)} ms)`)}</title>`;
  const text = labelled && w > b.label.length * 6.5 + 8 ? `<text x="${f(x0 + 4)}" y="${f(y + LANE - 4)}" fill="#ffffff" font-size="11">${esc(b.label)}</text>` : '';
  return `<g><rect x="${f(x0)}" y="${f(y)}" width="${f(w)}" height="${LANE}" fill="${fill}"/>${tip}${text}</g>`;
}

/** A tool call: pale while it waits for its first input, solid from then to its result. */
function toolRect(map: (v: number) => number, b: Bar, y: number): string {
  const inputAt = b.inputAt ?? b.start;
  if (map(inputAt) - map(b.start) < 1) return rect(map, b, y, COLORS.tool, true);
  const idle = rect(map, { start: b.start, end: inputAt, label: `${b.label} open, waiting for its input` }, y, COLORS.toolIdle);
  return idle + rect(map, { ...b, start: inputAt }, y, COLORS.tool, true);
}

function legendRow(y: number): string[] {
  const items: Array<[string, string]> = [
    ['waiting for the first token', COLORS.wait],
    ['decoding (ticks: a piece sent to a tool)', COLORS.decode],
    ['tool open, no input yet', COLORS.toolIdle],
    ['tool running', COLORS.tool],
  ];
  const out: string[] = [];
  let x = 12;
  for (const [label, fill] of items) {
    out.push(`<rect x="${x}" y="${y - 9}" width="14" height="12" fill="${fill}"/>`, `<text x="${x + 20}" y="${y + 1}">${esc(label)}</text>`);
    x += 34 + label.length * 6.2;
  }
  out.push(`<line x1="${f(x)}" x2="${f(x)}" y1="${y - 10}" y2="${y + 4}" stroke="${COLORS.reject}" stroke-width="2"/>`, `<text x="${f(x + 6)}" y="${y + 1}">call rejected</text>`);
  return out;
}
