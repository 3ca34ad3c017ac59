// Self-contained SVG line charts for reports: no scripts, no external assets.

/** One line of a chart. */
export interface Series {
  readonly name: string;
  /** Points (x, y); NaN y values break the line. */
  readonly points: readonly (readonly [number, number])[];
  /** Optional band (e.g. ± sd over seeds): same x values as `points`. */
  readonly band?: readonly (readonly [number, number, number])[];
  readonly dashed?: boolean;
  /** Line colour (default: the palette colour of the series' position). */
  readonly color?: string;
}

/** Chart options. */
export interface ChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly width?: number;
  readonly height?: number;
  /** Fixed y range (e.g. [0, 1] for accuracies); default: the data's range with a margin. */
  readonly yRange?: readonly [number, number];
}

/** A colour-blind-safe palette: Okabe–Ito's eight, then four of Tol's muted set, so that twelve lines stay distinct. */
export const PALETTE = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#F0E442',
  '#882255',
  '#117733',
  '#44AA99',
  '#999933',
];

/** Colour of the i-th line (or config) of a report: the same in every chart. */
export function paletteColor(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round "nice" tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1000 || a < 0.01) return v.toExponential(1);
  return Number(v.toPrecision(3)).toString();
}

/** A line chart as an inline SVG string. */
export function lineChart(all: readonly Series[], o: ChartOptions): string {
  // A series without a single finite value (a metric that config does not log) gets no legend entry.
  const series = all
    .map((s, i) => ({ ...s, color: s.color ?? paletteColor(i) }))
    .filter((s) => s.points.some((p) => Number.isFinite(p[1])));
  const W = o.width ?? 460;
  const H = o.height ?? 280;
  const m = { l: 52, r: 12, t: 28, b: 64 + 14 * Math.ceil(series.length / 3) };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b + 14 * Math.ceil(series.length / 3);
  const height = m.t + ph + m.b;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series
    .flatMap((s) => [...s.points.map((p) => p[1]), ...(s.band ?? []).flatMap((b) => [b[1], b[2]])])
    .filter(Number.isFinite);
  if (xs.length === 0 || ys.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="80" role="img"><text x="10" y="20" font-size="13" font-weight="bold">${escapeXml(o.title)}</text><text x="10" y="50" font-size="12" fill="#666">no data</text></svg>`;
  }
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (x0 === x1) {
    x0 -= 1;
    x1 += 1;
  }
  let [y0, y1] = o.yRange ?? [Math.min(...ys), Math.max(...ys)];
  if (!o.yRange) {
    const pad = (y1 - y0) * 0.08 || Math.abs(y0) * 0.1 || 0.1;
    y0 -= pad;
    y1 += pad;
  }
  const X = (x: number): number => m.l + ((x - x0) / (x1 - x0)) * pw;
  // Bands (± sd) may overshoot a fixed range such as [0, 1]; they are clipped to the plot area.
  const Y = (y: number): number => m.t + ph - ((Math.min(Math.max(y, y0), y1) - y0) / (y1 - y0)) * ph;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" role="img" aria-label="${escapeXml(o.title)}" font-family="system-ui, sans-serif">`,
  );
  parts.push(`<text x="${m.l}" y="16" font-size="13" font-weight="bold">${escapeXml(o.title)}</text>`);
  for (const t of ticks(y0, y1)) {
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${Y(t).toFixed(1)}" y2="${Y(t).toFixed(1)}" stroke="#e5e5e5"/>`);
    parts.push(
      `<text x="${m.l - 6}" y="${(Y(t) + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#444">${fmt(t)}</text>`,
    );
  }
  for (const t of ticks(x0, x1, 6)) {
    parts.push(
      `<text x="${X(t).toFixed(1)}" y="${m.t + ph + 14}" font-size="10" text-anchor="middle" fill="#444">${fmt(t)}</text>`,
    );
  }
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`);
  parts.push(
    `<text x="${m.l + pw / 2}" y="${m.t + ph + 30}" font-size="11" text-anchor="middle">${escapeXml(o.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(12 ${m.t + ph / 2}) rotate(-90)" font-size="11" text-anchor="middle">${escapeXml(o.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = s.color;
    if (s.band && s.band.length > 1) {
      const upper = s.band.map((b) => `${X(b[0]).toFixed(1)},${Y(b[2]).toFixed(1)}`);
      const lower = [...s.band].reverse().map((b) => `${X(b[0]).toFixed(1)},${Y(b[1]).toFixed(1)}`);
      parts.push(
        `<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.15" stroke="none"/>`,
      );
    }
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (!Number.isFinite(y)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`;
      pen = true;
    }
    parts.push(
      `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
    );
    if (s.points.length <= 30)
      for (const [x, y] of s.points)
        if (Number.isFinite(y))
          parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="2.2" fill="${color}"/>`);
    const lx = m.l + (i % 3) * (pw / 3);
    const ly = m.t + ph + 46 + 14 * Math.floor(i / 3);
    parts.push(
      `<line x1="${lx}" x2="${lx + 14}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/><text x="${lx + 18}" y="${ly}" font-size="10">${escapeXml(s.name.length > 26 ? s.name.slice(0, 25) + '…' : s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}
