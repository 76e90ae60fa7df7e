import { axes, color, emptyNote, esc, f, frame, legend, linearScale, logScale, svgDocument, type Scale } from './svg-frame.ts';

/**
 * Dependency-free SVG charts for the benchmark reports: a line/points chart, grouped bars with
 * error bars, and empirical CDFs. Each returns a standalone SVG document as a string.
 */

export interface XY {
  x: number;
  y: number;
}

export interface LineSeries {
  label: string;
  points: XY[];
  style: 'line' | 'points';
}

export interface BarGroup {
  label: string;
  bars: Array<{ label: string; value: number; error?: number }>;
}

const DEFAULT_WIDTH = 720;
const DEFAULT_HEIGHT = 420;

/**
 * Lines (joined in x order) or markers, on a linear or log10 x axis. Points that cannot be drawn
 * (non-finite, or x ≤ 0 on a log axis) are left out.
 *
 * @example
 * lineChart({ title: 'Speedup vs t/g', xLabel: 't/g', yLabel: 'speedup', logX: true,
 *   series: [{ label: 'measured', style: 'points', points: [{ x: 0.5, y: 1.4 }, { x: 2, y: 1.3 }] }] })
 */
export function lineChart(o: { title: string; xLabel: string; yLabel: string; series: LineSeries[]; logX?: boolean; width?: number; height?: number }): string {
  const series = o.series.map((s) => ({ ...s, points: s.points.filter((p) => drawable(p.x, o.logX) && Number.isFinite(p.y)) }));
  const all = series.flatMap((s) => s.points);
  const fr = frame(o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT, series.map((s) => s.label));
  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);
  const x = xScale(xs, [fr.left, fr.right], o.logX);
  const y = linearScale(Math.min(...ys), Math.max(...ys), [fr.bottom, fr.top]);
  const body = axes(fr, x, y, o.xLabel, o.yLabel);
  series.forEach((s, i) => {
    const c = color(i);
    body.push(`<g><title>${esc(s.label)}</title>`);
    if (s.style === 'line') {
      const pts = [...s.points].sort((a, b) => a.x - b.x).map((p) => `${f(x.map(p.x))},${f(y.map(p.y))}`);
      if (pts.length) body.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>`);
    } else {
      for (const p of s.points) body.push(`<circle cx="${f(x.map(p.x))}" cy="${f(y.map(p.y))}" r="4" fill="${c}" stroke="#ffffff" stroke-width="1"/>`);
    }
    body.push('</g>');
  });
  if (all.length === 0) body.push(emptyNote(fr));
  body.push(...legend(fr, series.map((s, i) => ({ label: s.label, swatch: s.style, color: color(i) }))));
  return svgDocument(fr, o.title, body);
}

/**
 * Grouped bars: one cluster per group (e.g. per workload), one colour per bar label across all
 * groups (e.g. "partial off", "partial on", "bound"), with ± error whiskers (e.g. one std).
 *
 * @example
 * barChart({ title: 'Latency', yLabel: 'ms', groups: [
 *   { label: 'codegen', bars: [{ label: 'off', value: 900, error: 20 }, { label: 'on', value: 700, error: 15 }] }] })
 */
/** A value as a tooltip says it: one decimal, no float noise (11672.81234… → 11672.8). */
const round = (v: number) => String(Number(v.toFixed(1)));

export function barChart(o: { title: string; yLabel: string; groups: BarGroup[]; width?: number; height?: number }): string {
  const labels = [...new Set(o.groups.flatMap((g) => g.bars.map((b) => b.label)))];
  const fr = frame(o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT, labels);
  const bars = o.groups.flatMap((g) => g.bars).filter((b) => Number.isFinite(b.value));
  const err = (b: { error?: number }) => (b.error !== undefined && Number.isFinite(b.error) ? Math.abs(b.error) : 0);
  // A whisker stops at zero on the bar's side of it: a latency of 7 s ± 8 s is not down to −1 s.
  const low = (b: BarGroup['bars'][number]) => (b.value >= 0 ? Math.max(0, b.value - err(b)) : b.value - err(b));
  const high = (b: BarGroup['bars'][number]) => (b.value <= 0 ? Math.min(0, b.value + err(b)) : b.value + err(b));
  const y = linearScale(Math.min(...bars.map(low)), Math.max(...bars.map(high)), [fr.bottom, fr.top], { zero: true });
  const body = axes(fr, { ticks: [], map: (v) => v }, y, '', o.yLabel);
  const groupWidth = (fr.right - fr.left) / Math.max(1, o.groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, labels.length);
  o.groups.forEach((g, gi) => {
    const x0 = fr.left + gi * groupWidth + groupWidth * 0.1;
    for (const b of g.bars) {
      if (!Number.isFinite(b.value)) continue;
      const li = labels.indexOf(b.label);
      const bx = x0 + li * barWidth;
      const [top, bottom] = [y.map(Math.max(0, b.value)), y.map(Math.min(0, b.value))];
      body.push(
        `<rect x="${f(bx + 1)}" y="${f(top)}" width="${f(Math.max(1, barWidth - 2))}" height="${f(Math.max(0, bottom - top))}" fill="${color(li)}"><title>${esc(`${g.label} — ${b.label}: ${round(b.value)}${err(b) ? ` ± ${round(err(b))}` : ''}`)}</title></rect>`,
      );
      if (err(b) > 0) {
        const cx = bx + barWidth / 2;
        const [hi, lo] = [y.map(high(b)), y.map(low(b))];
        body.push(
          `<path d="M${f(cx)},${f(hi)}V${f(lo)}M${f(cx - 4)},${f(hi)}H${f(cx + 4)}M${f(cx - 4)},${f(lo)}H${f(cx + 4)}" stroke="#222222" stroke-width="1.2" fill="none"/>`,
        );
      }
    }
    body.push(`<text x="${f(x0 + groupWidth * 0.4)}" y="${f(fr.bottom + 18)}" text-anchor="middle">${esc(g.label)}</text>`);
  });
  if (bars.length === 0) body.push(emptyNote(fr));
  body.push(...legend(fr, labels.map((label, i) => ({ label, swatch: 'bar' as const, color: color(i) }))));
  return svgDocument(fr, o.title, body);
}

/**
 * Empirical CDFs as step lines: y = fraction of values ≤ x, from 0 to 1. Non-finite values (and
 * values ≤ 0 on a log axis) are left out.
 *
 * @example
 * cdfChart({ title: 'Latency CDF', xLabel: 'ms', series: [{ label: 'on', values: [510, 530, 620] }] })
 */
export function cdfChart(o: { title: string; xLabel: string; series: Array<{ label: string; values: number[] }>; logX?: boolean; width?: number; height?: number }): string {
  const series = o.series.map((s) => ({ label: s.label, values: s.values.filter((v) => drawable(v, o.logX)).sort((a, b) => a - b) }));
  const all = series.flatMap((s) => s.values);
  const fr = frame(o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT, series.map((s) => s.label));
  const x = xScale(all, [fr.left, fr.right], o.logX);
  // Quartiles read better than fifths on a CDF: the median is a grid line.
  const y = { ...linearScale(0, 1, [fr.bottom, fr.top]), ticks: [0, 0.25, 0.5, 0.75, 1] };
  const body = axes(fr, x, y, o.xLabel, 'fraction ≤ x');
  series.forEach((s, i) => {
    if (s.values.length === 0) return;
    const n = s.values.length;
    // Start at the axis floor so the curve visibly rises from 0 at the first value.
    let d = `M${f(fr.left)},${f(y.map(0))}H${f(x.map(s.values[0]!))}`;
    s.values.forEach((v, k) => {
      d += `H${f(x.map(v))}V${f(y.map((k + 1) / n))}`;
    });
    d += `H${f(fr.right)}`;
    body.push(`<path d="${d}" fill="none" stroke="${color(i)}" stroke-width="2"><title>${esc(s.label)}</title></path>`);
  });
  if (all.length === 0) body.push(emptyNote(fr));
  body.push(...legend(fr, series.map((s, i) => ({ label: s.label, swatch: 'line' as const, color: color(i) }))));
  return svgDocument(fr, o.title, body);
}

function drawable(v: number, logX?: boolean): boolean {
  return Number.isFinite(v) && (!logX || v > 0);
}

function xScale(values: number[], range: [number, number], logX?: boolean): Scale {
  return logX ? logScale(Math.min(...values), Math.max(...values), range) : linearScale(Math.min(...values), Math.max(...values), range);
}
