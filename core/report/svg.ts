// Self-contained SVG line charts for reports: no scripts, no external assets.
import { markerSvg, seriesStyle, tint, type SeriesStyle } from './palette';

export { PALETTE, paletteColor, seriesStyle, type SeriesStyle } from './palette';

/** One line of a chart. */
export interface Series {
  readonly name: string;
  /** Points (x, y); NaN y values break the line. */
  readonly points: readonly (readonly [number, number])[];
  /** Optional band (e.g. ± sd over seeds): same x values as `points`. */
  readonly band?: readonly (readonly [number, number, number])[];
  readonly dashed?: boolean;
  /** Colour and marker (default: the palette style of the series' position). */
  readonly style?: SeriesStyle;
  /** Line colour, replacing the style's. */
  readonly color?: string;
  /**
   * The series' number across the page (`data-series`), when a chart draws only some of a page's
   * series (a comparison's configs of one reward source): default its position in the chart.
   */
  readonly index?: number;
}

/** A horizontal reference line (e.g. the base model's accuracy at step 0), labelled on the chart. */
export interface ReferenceLine {
  readonly y: number;
  readonly label: string;
  /** Default grey. */
  readonly color?: string;
}

/** Chart options. */
export interface ChartOptions {
  readonly title: string;
  /** A second, smaller title line (e.g. how the curves are smoothed). */
  readonly subtitle?: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly width?: number;
  /** Fixed y range; default: the data's range (lines, bands, reference lines) with a margin. */
  readonly yRange?: readonly [number, number];
  /** Limits the data-scaled range may not cross (e.g. [0, 1] for accuracies). */
  readonly yBounds?: readonly [number, number];
  /**
   * Smallest span of the data-scaled range (e.g. 0.05, five points, for accuracies): lines a tenth of
   * a point apart are then drawn nearly flat instead of filling the plot as if they differed.
   */
  readonly minSpan?: number;
  readonly references?: readonly ReferenceLine[];
  /**
   * Leave out of the plot series far off the others' scale (a reward on another scale, 20 against
   * 0 … 1): each is named in the legend with its range instead, so the others are not flattened.
   */
  readonly offScale?: boolean;
}

/** [min, max] of the finite values of `list` (points and bands). */
function valueRange(list: readonly Pick<Series, 'points' | 'band'>[]): [number, number] {
  const ys = list
    .flatMap((s) => [...s.points.map((p) => p[1]), ...(s.band ?? []).flatMap((b) => [b[1], b[2]])])
    .filter(Number.isFinite);
  return ys.length ? [Math.min(...ys), Math.max(...ys)] : [NaN, NaN];
}

/**
 * Indexes of the series off the others' scale: one at a time, the series whose removal shrinks the y
 * range most, while what is left spans under a tenth of the range with it and it lies wholly outside
 * what is left; at most a third of the series, and never the last two.
 */
export function offScale(
  series: readonly (Pick<Series, 'points' | 'band'> & { readonly index: number })[],
): Set<number> {
  const off = new Set<number>();
  let shown = [...series];
  while (shown.length > 2 && off.size < Math.floor(series.length / 3)) {
    const [lo, hi] = valueRange(shown);
    if (!(hi > lo)) break;
    let best = -1;
    let bestRest: [number, number] = [lo, hi];
    shown.forEach((_, k) => {
      const rest = valueRange(shown.filter((_, j) => j !== k));
      if (rest[1] - rest[0] < bestRest[1] - bestRest[0]) [best, bestRest] = [k, rest];
    });
    if (best < 0 || (bestRest[1] - bestRest[0]) * 10 >= hi - lo) break;
    const [a, b] = valueRange([shown[best]!]);
    if (!(a > bestRest[1] || b < bestRest[0])) break;
    off.add(shown[best]!.index);
    shown = shown.filter((_, j) => j !== best);
  }
  return off;
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round "nice" tick values covering [lo, hi], about `count` of them, at least `minStep` apart. */
export function ticks(lo: number, hi: number, count = 5, minStep = 0): number[] {
  if (!(hi > lo)) return [lo];
  const raw = Math.max((hi - lo) / count, minStep);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * (1 - 1e-12)) ?? raw;
  // Each tick from its index, and at most count + 1 of them (step >= raw): adding `step` to the last
  // tick never moves when the range is below the floating-point spacing at lo (0.3 to 0.30000000000000004).
  const start = Math.ceil(lo / step - 1e-9) * step;
  const n = Math.floor((hi - start) / step + 1e-9);
  const out: number[] = [];
  for (let k = 0; k <= n; k++) {
    const v = Number((start + k * step).toFixed(10));
    if (out[out.length - 1] !== v) out.push(v);
  }
  return out.length ? out : [lo];
}

/**
 * Labels of tick values: as few decimals as show every value exactly (so 0.4540 and 0.4545 never both
 * read "0.454"), trailing zeros dropped; exponential notation for values of 10⁵ and over or under 10⁻³.
 */
export function tickLabels(values: readonly number[]): string[] {
  const big = Math.max(0, ...values.map(Math.abs));
  const exact = (f: (v: number) => string): boolean =>
    values.every((v) => Math.abs(Number(f(v)) - v) <= 1e-9 * Math.max(big, 1e-12));
  const exp = big >= 1e5 || (big > 0 && big < 1e-3);
  for (let d = 0; d <= 10; d++) {
    const f = exp
      ? (v: number): string => (v === 0 ? '0' : v.toExponential(d))
      : (v: number): string => Number(v.toFixed(d)).toString();
    if (exact(f)) return values.map(f);
  }
  return values.map((v) => v.toPrecision(6));
}

// Advance widths (in em) of DejaVu Sans, the widest of the usual system-ui fallbacks, rounded up:
// layout is decided before any browser measures, so it plans for the widest font it may meet.
const NARROW = new Set([..."iljtfr.,:;!|'()[] "]);
const WIDE = new Set([...'mwMW@%']);
/** Estimated width of a line of text in pixels (bold text is about 10% wider). */
export function textWidth(s: string, size: number, bold = false): number {
  let em = 0;
  for (const ch of s) em += NARROW.has(ch) ? 0.36 : WIDE.has(ch) ? 0.98 : /[A-Z0-9±×…]/.test(ch) ? 0.72 : 0.64;
  return em * size * (bold ? 1.1 : 1);
}

/** Words of `s` wrapped into lines at most `width` pixels wide (a word wider than that is cut with "…"). */
export function wrapText(s: string, width: number, size: number, bold = false): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of s.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (textWidth(next, size, bold) <= width) line = next;
    else {
      if (line) lines.push(line);
      line = fitText(word, width, size, bold);
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** `s`, cut with "…" where it would be wider than `width` pixels. */
export function fitText(s: string, width: number, size: number, bold = false): string {
  if (textWidth(s, size, bold) <= width) return s;
  let cut = s;
  while (cut.length > 1 && textWidth(cut + '…', size, bold) > width) cut = cut.slice(0, -1);
  return cut.trimEnd() + '…';
}

const f1 = (v: number): string => v.toFixed(1);
const REF_COLOR = '#555555';

/** A series as the chart draws it: its position in the input and its resolved style. */
type ChartSeries = Series & { readonly index: number; readonly style: SeriesStyle };

/** Where the plot lies in the SVG and how data maps onto it. */
interface Frame {
  /** Left margin (room for the y tick labels) and top of the plot. */
  readonly m: { readonly l: number; readonly r: number; readonly t: number };
  /** Plot width and height. */
  readonly pw: number;
  readonly ph: number;
  readonly X: (x: number) => number;
  readonly Y: (y: number) => number;
}

/**
 * A line chart as an inline SVG string. Lines carry their palette colour and a marker (so a
 * greyscale print tells them apart); a line that another drawn later coincides with is drawn wider,
 * so it shows around it; ± sd bands are opaque tints with dotted edges, so overlapping bands never
 * mix into a colour no series has. The y axis spans the data, reference lines included.
 */
export function lineChart(all: readonly Series[], o: ChartOptions): string {
  // A series without a single finite value (a metric that config does not log) gets no legend entry.
  const series: ChartSeries[] = all
    .map((s, i) => {
      const base = s.style ?? seriesStyle(i);
      return { ...s, index: s.index ?? i, style: s.color ? { ...base, color: s.color } : base };
    })
    .filter((s) => s.points.some((p) => Number.isFinite(p[1])));
  const off = o.offScale ? offScale(series) : new Set<number>();
  const drawn = series.filter((s) => !off.has(s.index));
  const W = o.width ?? 540;
  const { head, top } = chartHead(o, W);
  const xs = drawn.flatMap((s) => s.points.map((p) => p[0]));
  const refs = (o.references ?? []).filter((r) => Number.isFinite(r.y));
  const ys = [
    ...drawn.flatMap((s) => [...s.points.map((p) => p[1]), ...(s.band ?? []).flatMap((b) => [b[1], b[2]])]),
    ...refs.map((r) => r.y),
  ].filter(Number.isFinite);
  if (xs.length === 0 || ys.length === 0) {
    const h = top + 36;
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" role="img" aria-label="${escapeXml(o.title)}" font-family="system-ui, sans-serif">${head.join('')}<text x="8" y="${top + 22}" font-size="12" fill="#666">no data</text></svg>`;
  }
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (x0 === x1) {
    x0 -= 1;
    x1 += 1;
  }
  const [y0, y1] = yDomain(ys, o);
  const yTicks = ticks(y0, y1);
  const yTickText = tickLabels(yTicks);
  const m = { l: 26 + Math.max(...yTickText.map((t) => textWidth(t, 10))), r: 14, t: top + 8 };
  const pw = W - m.l - m.r;
  const ph = 200;
  const frame: Frame = {
    m,
    pw,
    ph,
    X: (x) => m.l + ((x - x0) / (x1 - x0)) * pw,
    // Bands (± sd) may overshoot a range such as [0, 1]; they are clipped to the plot area.
    Y: (y) => m.t + ph - ((Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0)) * ph,
  };
  // a series left out of the plot says so in the legend, with the range of its values
  const label = (s: ChartSeries): string => {
    if (!off.has(s.index)) return s.name;
    const [a, b] = valueRange([{ points: s.points }]).map((v) => Number(v.toPrecision(3)));
    return `${s.name}: off the scale, ${a === b ? a : `${a} … ${b}`}`;
  };
  const legend = legendLayout(series.map(label), refs, W, m.t + ph + 50);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${legend.height}" viewBox="0 0 ${W} ${legend.height}" role="img" aria-label="${escapeXml(o.title)}" font-family="system-ui, sans-serif">`,
    ...head,
    ...axesSvg(frame, yTicks, yTickText, ticks(x0, x1, 6, xs.every(Number.isInteger) ? 1 : 0), o),
    ...bandsSvg(frame, drawn),
    // The frame over the bands but under the lines: a line at a bound (an agreement of 1) stays visible.
    `<rect class="plot" x="${f1(m.l)}" y="${m.t}" width="${f1(pw)}" height="${ph}" fill="none" stroke="#999"/>`,
    ...refs.map((r) => {
      const y = frame.Y(r.y);
      return `<line class="ref-line" x1="${f1(m.l)}" x2="${f1(m.l + pw)}" y1="${f1(y)}" y2="${f1(y)}" stroke="${r.color ?? REF_COLOR}" stroke-width="1.4" stroke-dasharray="2 3"/>`;
    }),
    ...linesSvg(frame, drawn),
    ...legendSvg(legend, series, series.map(label), refs),
    '</svg>',
  ];
  return parts.join('');
}

/** The title and subtitle lines, wrapped to the chart's width, and the height they take. */
function chartHead(o: ChartOptions, W: number): { head: string[]; top: number } {
  const titleLines = wrapText(o.title, W - 16, 13, true);
  const subLines = o.subtitle ? wrapText(o.subtitle, W - 16, 11) : [];
  const head = [
    ...titleLines.map(
      (t, i) => `<text class="title" x="8" y="${18 + 16 * i}" font-size="13" font-weight="bold">${escapeXml(t)}</text>`,
    ),
    ...subLines.map(
      (t, i) =>
        `<text class="subtitle" x="8" y="${16 + 16 * titleLines.length + 14 * i}" font-size="11" fill="#555">${escapeXml(t)}</text>`,
    ),
  ];
  return { head, top: 8 + 16 * titleLines.length + 14 * subLines.length };
}

/** The y range: `yRange` if given, else the values' range with a margin, kept in `yBounds`, at least `minSpan` wide. */
function yDomain(ys: readonly number[], o: ChartOptions): [number, number] {
  if (o.yRange) return [o.yRange[0], o.yRange[1]];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const pad = (y1 - y0) * 0.08 || Math.abs(y0) * 0.1 || 0.1;
  y0 -= pad;
  y1 += pad;
  const [lo, hi] = o.yBounds ?? [-Infinity, Infinity];
  y0 = Math.max(y0, lo);
  y1 = Math.min(y1, hi);
  if (o.minSpan !== undefined && y1 - y0 < o.minSpan) {
    // widened about its middle; where that crosses a bound, moved back inside it
    const mid = Math.min(Math.max((y0 + y1) / 2, lo + o.minSpan / 2), hi - o.minSpan / 2);
    y0 = Math.max(lo, mid - o.minSpan / 2);
    y1 = Math.min(hi, mid + o.minSpan / 2);
  }
  return [y0, y1];
}

/** Grid lines and tick labels of both axes, and the axis titles. */
function axesSvg(
  f: Frame,
  yTicks: readonly number[],
  yTickText: readonly string[],
  xTicks: readonly number[],
  o: ChartOptions,
): string[] {
  const { m, pw, ph, X, Y } = f;
  const parts: string[] = [];
  for (const [k, t] of yTicks.entries()) {
    parts.push(`<line x1="${f1(m.l)}" x2="${f1(m.l + pw)}" y1="${f1(Y(t))}" y2="${f1(Y(t))}" stroke="#e5e5e5"/>`);
    parts.push(
      `<text x="${f1(m.l - 6)}" y="${f1(Y(t) + 4)}" font-size="10" text-anchor="end" fill="#444">${yTickText[k]}</text>`,
    );
  }
  // Training steps are whole numbers: their axis has no ticks between them (the caller's minimum step).
  for (const [k, t] of tickLabels(xTicks).entries()) {
    parts.push(
      `<text x="${f1(X(xTicks[k]!))}" y="${m.t + ph + 14}" font-size="10" text-anchor="middle" fill="#444">${t}</text>`,
    );
  }
  parts.push(
    `<text x="${f1(m.l + pw / 2)}" y="${m.t + ph + 30}" font-size="11" text-anchor="middle">${escapeXml(o.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(12 ${m.t + ph / 2}) rotate(-90)" font-size="11" text-anchor="middle">${escapeXml(fitText(o.yLabel, ph, 11))}</text>`,
  );
  return parts;
}

/** The ± sd bands: every fill first, then every dotted edge, so that no band covers another's edge. */
function bandsSvg(f: Frame, drawn: readonly ChartSeries[]): string[] {
  const { X, Y } = f;
  const parts: string[] = [];
  for (const s of drawn) {
    if (!s.band || s.band.length < 2) continue;
    const upper = s.band.map((b) => `${f1(X(b[0]))},${f1(Y(b[2]))}`);
    const lower = [...s.band].reverse().map((b) => `${f1(X(b[0]))},${f1(Y(b[1]))}`);
    parts.push(
      `<polygon class="band" points="${[...upper, ...lower].join(' ')}" fill="${tint(s.style.color, 0.16)}" stroke="none"/>`,
    );
  }
  for (const s of drawn) {
    if (!s.band || s.band.length < 2) continue;
    for (const k of [1, 2] as const)
      parts.push(
        `<polyline class="band-edge" points="${s.band.map((b) => `${f1(X(b[0]))},${f1(Y(b[k]))}`).join(' ')}" fill="none" stroke="${s.style.color}" stroke-width="0.7" stroke-dasharray="1 2"/>`,
      );
  }
  return parts;
}

/** The lines, then their markers; a line that later lines cover is drawn wider, with larger markers. */
function linesSvg(f: Frame, drawn: readonly ChartSeries[]): string[] {
  const { X, Y } = f;
  const parts: string[] = [];
  // A line that later lines lie on (the same pixels at half of its points or more) is drawn wider, once per such line.
  const pixels = drawn.map((s) =>
    s.points.filter((p) => Number.isFinite(p[1])).map((p) => `${f1(X(p[0]))},${f1(Y(p[1]))}`),
  );
  const covered = pixels.map((mine, i) => {
    const set = new Set(mine);
    return pixels
      .slice(i + 1)
      .filter((theirs) => theirs.filter((p) => set.has(p)).length * 2 >= mine.length && mine.length > 0).length;
  });
  drawn.forEach((s, i) => {
    const width = 1.8 + 2.4 * Math.min(covered[i]!, 3);
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (!Number.isFinite(y)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${f1(X(x))},${f1(Y(y))}`;
      pen = true;
    }
    parts.push(
      `<path class="series" data-series="${s.index}" d="${d}" fill="none" stroke="${s.style.color}" stroke-width="${f1(width)}" stroke-linejoin="round"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
    );
  });
  // Markers: every point of a short line; about eight on a long one, staggered between lines so that
  // lines on top of each other still show each one's marker.
  drawn.forEach((s, i) => {
    const finite = s.points.filter((p) => Number.isFinite(p[1]));
    const step = finite.length <= 12 ? 1 : Math.ceil(finite.length / 8);
    const offset = step > 1 ? Math.floor((i * step) / Math.max(drawn.length, 1)) % step : 0;
    const r = 3 + 1.2 * Math.min(covered[i]!, 3);
    finite.forEach(([x, y], k) => {
      if ((k - offset) % step === 0) parts.push(markerSvg(s.style, X(x), Y(y), r));
    });
  });
  return parts;
}

/** Legend grid: as many columns as the longest name allows (at most 3), rows below the plot. */
interface LegendLayout {
  readonly columns: number;
  readonly colW: number;
  readonly top: number;
  /** Height of the whole chart, legend included. */
  readonly height: number;
}

function legendLayout(labels: readonly string[], refs: readonly ReferenceLine[], W: number, top: number): LegendLayout {
  // A name too long for one column is cut, its full text in a tooltip.
  const entryWidth = (name: string): number => 34 + textWidth(name, 10);
  const widest = Math.max(...labels.map(entryWidth), ...refs.map((r) => entryWidth(r.label)), 1);
  const columns = Math.max(1, Math.min(3, Math.floor((W - 16) / widest)));
  const rows = Math.ceil((labels.length + refs.length) / columns);
  return { columns, colW: (W - 16) / columns, top, height: top + 14 * rows + 4 };
}

/** The legend: each entry a sample of the line (and its marker), then the name; reference lines last. */
function legendSvg(
  l: LegendLayout,
  series: readonly ChartSeries[],
  labels: readonly string[],
  refs: readonly ReferenceLine[],
): string[] {
  const entry = (
    k: number,
    name: string,
    sample: (x: number, y: number) => string,
    cls: string,
    attrs = '',
  ): string => {
    const lx = 8 + (k % l.columns) * l.colW;
    const ly = l.top + 14 * Math.floor(k / l.columns);
    return `<g class="${cls}"${attrs}><title>${escapeXml(name)}</title>${sample(lx, ly - 4)}<text x="${f1(lx + 27)}" y="${ly}" font-size="10">${escapeXml(fitText(name, l.colW - 34, 10))}</text></g>`;
  };
  return [
    ...series.map((s, i) =>
      entry(
        i,
        labels[i]!,
        (x, y) =>
          `<line x1="${f1(x)}" x2="${f1(x + 22)}" y1="${y}" y2="${y}" stroke="${s.style.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>${markerSvg(s.style, x + 11, y, 3)}`,
        'legend-entry',
        ` data-series="${s.index}"`,
      ),
    ),
    ...refs.map((r, j) =>
      entry(
        series.length + j,
        r.label,
        (x, y) =>
          `<line x1="${f1(x)}" x2="${f1(x + 22)}" y1="${y}" y2="${y}" stroke="${r.color ?? REF_COLOR}" stroke-width="1.4" stroke-dasharray="2 3"/>`,
        'legend-entry ref-entry',
      ),
    ),
  ];
}
