/**
 * The parts every chart shares: scales with readable ticks, axes, title, legend, and text
 * escaping. Plain SVG strings: a handful of elements, no dependency, opens in any browser.
 */

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies (yellow left out: too pale on white). */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];

export function color(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

/** Escapes text and attribute values (labels come from callers: workload names, file names). */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A coordinate: one decimal is finer than a pixel and keeps the file small. */
export const f = (v: number) => (Math.round(v * 10) / 10).toString();

/** Tick label: up to 3 significant digits, thousands as k, no float noise (0.30000000000000004). */
export function tickLabel(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 10_000) return `${trim(v / 1000)}k`;
  return trim(v);
}

function trim(v: number): string {
  return Number(v.toPrecision(3)).toString();
}

export interface Scale {
  /** Data value → pixel. */
  map(v: number): number;
  ticks: number[];
  domain: [number, number];
}

/** A linear scale over [min, max] widened to "nice" ticks (1, 2, 5 × 10^k). */
export function linearScale(min: number, max: number, range: [number, number], opts: { zero?: boolean } = {}): Scale {
  let lo = opts.zero ? Math.min(0, min) : min;
  let hi = opts.zero ? Math.max(0, max) : max;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  if (lo === hi) [lo, hi] = lo === 0 ? [0, 1] : [lo - Math.abs(lo) * 0.1, hi + Math.abs(hi) * 0.1];
  const step = niceStep((hi - lo) / 5);
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let v = start; v <= end + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { domain: [start, end], ticks, map: affine(start, end, range) };
}

function niceStep(raw: number): number {
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** A log10 scale over whole decades; 2 and 5 marks too when the span is three decades or less. */
export function logScale(min: number, max: number, range: [number, number]): Scale {
  const lo = Number.isFinite(min) && min > 0 ? Math.floor(Math.log10(min)) : 0;
  const hi0 = Number.isFinite(max) && max > 0 ? Math.ceil(Math.log10(max)) : 1;
  const hi = hi0 > lo ? hi0 : lo + 1;
  const ticks: number[] = [];
  for (let d = lo; d <= hi; d++) {
    for (const m of hi - lo <= 3 ? [1, 2, 5] : [1]) if (d < hi || m === 1) ticks.push(Number((m * 10 ** d).toPrecision(12)));
  }
  const map = affine(lo, hi, range);
  return { domain: [10 ** lo, 10 ** hi], ticks, map: (v) => map(Math.log10(v)) };
}

function affine(d0: number, d1: number, [r0, r1]: [number, number]): (v: number) => number {
  return (v) => r0 + ((v - d0) / (d1 - d0)) * (r1 - r0);
}

/** Longer legend labels are cut with an ellipsis (the full text stays in a tooltip) so the plot keeps its width. */
const LEGEND_CHARS = 34;

export interface Frame {
  width: number;
  height: number;
  /** The plotting area, in pixels. */
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** Room for the title above, tick labels and axis titles left and below, the legend on the right. */
export function frame(width: number, height: number, legendLabels: readonly string[]): Frame {
  const longest = Math.max(0, ...legendLabels.map((l) => Math.min(l.length, LEGEND_CHARS)));
  const legendWidth = legendLabels.length ? 36 + longest * 6.5 : 0;
  return { width, height, left: 72, right: width - 16 - legendWidth, top: 44, bottom: height - 52 };
}

export function svgDocument(fr: Frame, title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${fr.width}" height="${fr.height}" viewBox="0 0 ${fr.width} ${fr.height}" role="img" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect x="0" y="0" width="${fr.width}" height="${fr.height}" fill="#ffffff"/>`,
    `<text x="${f(fr.width / 2)}" y="24" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** Grid lines, both axes with their ticks, and the axis titles. */
export function axes(fr: Frame, x: Scale | { ticks: []; map: (v: number) => number }, y: Scale, xLabel: string, yLabel: string): string[] {
  const out: string[] = ['<g stroke="#e4e4e4" stroke-width="1">'];
  for (const t of y.ticks) out.push(`<line x1="${fr.left}" x2="${f(fr.right)}" y1="${f(y.map(t))}" y2="${f(y.map(t))}"/>`);
  for (const t of x.ticks) out.push(`<line x1="${f(x.map(t))}" x2="${f(x.map(t))}" y1="${fr.top}" y2="${f(fr.bottom)}"/>`);
  out.push('</g>', '<g stroke="#333333" stroke-width="1">');
  out.push(`<line x1="${fr.left}" x2="${f(fr.right)}" y1="${f(fr.bottom)}" y2="${f(fr.bottom)}"/>`);
  out.push(`<line x1="${fr.left}" x2="${fr.left}" y1="${fr.top}" y2="${f(fr.bottom)}"/>`);
  out.push('</g>', '<g fill="#333333">');
  for (const t of y.ticks) out.push(`<text x="${fr.left - 6}" y="${f(y.map(t) + 4)}" text-anchor="end">${esc(tickLabel(t))}</text>`);
  for (const t of x.ticks) out.push(`<text x="${f(x.map(t))}" y="${f(fr.bottom + 16)}" text-anchor="middle">${esc(tickLabel(t))}</text>`);
  out.push('</g>');
  if (xLabel) out.push(`<text x="${f((fr.left + fr.right) / 2)}" y="${f(fr.height - 12)}" text-anchor="middle" font-size="13">${esc(xLabel)}</text>`);
  const cy = (fr.top + fr.bottom) / 2;
  out.push(`<text x="16" y="${f(cy)}" text-anchor="middle" font-size="13" transform="rotate(-90 16 ${f(cy)})">${esc(yLabel)}</text>`);
  return out;
}

export type Swatch = 'line' | 'points' | 'bar';


/** The legend, top right beside the plot: one swatch and label per series. */
export function legend(fr: Frame, entries: ReadonlyArray<{ label: string; swatch: Swatch; color: string }>): string[] {
  const x = fr.right + 16;
  const out: string[] = [];
  entries.forEach((e, i) => {
    const y = fr.top + 8 + i * 20;
    if (e.swatch === 'line') out.push(`<line x1="${f(x)}" x2="${f(x + 20)}" y1="${y}" y2="${y}" stroke="${e.color}" stroke-width="2.5"/>`);
    else if (e.swatch === 'points') out.push(`<circle cx="${f(x + 10)}" cy="${y}" r="4" fill="${e.color}"/>`);
    else out.push(`<rect x="${f(x + 3)}" y="${y - 6}" width="14" height="12" fill="${e.color}"/>`);
    const shown = e.label.length > LEGEND_CHARS ? `${e.label.slice(0, LEGEND_CHARS - 1)}…` : e.label;
    out.push(`<text x="${f(x + 28)}" y="${y + 4}"><title>${esc(e.label)}</title>${esc(shown)}</text>`);
  });
  return out;
}

/** "No data" in the middle of an empty plot, rather than a blank square. */
export function emptyNote(fr: Frame): string {
  return `<text x="${f((fr.left + fr.right) / 2)}" y="${f((fr.top + fr.bottom) / 2)}" text-anchor="middle" fill="#888888">no data</text>`;
}
