// The report's series styles: a colour and a marker per series, so that twelve lines stay apart in
// colour, on a greyscale print and for colour-blind readers (the marker carries what the colour cannot).

/**
 * Twelve colours: Okabe–Ito's (without its yellow, too pale on white), then five of Tol's. Each has at
 * least 2:1 contrast against the white page, and every pair is at least 15 apart in CIELAB (ΔE*76).
 */
export const PALETTE = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#882255',
  '#117733',
  '#44AA99',
  '#999933',
  '#332288',
] as const;

/** Marker shapes; each is drawn filled and hollow, which makes twelve markers. */
export const MARKER_SHAPES = ['circle', 'square', 'triangle', 'diamond', 'triangle-down', 'plus'] as const;
export type MarkerShape = (typeof MARKER_SHAPES)[number];

/** How one series is drawn. */
export interface SeriesStyle {
  readonly color: string;
  readonly marker: MarkerShape;
  /** Hollow (white inside, coloured outline) or filled. */
  readonly hollow: boolean;
}

/**
 * Style of the i-th series (or config) of a report, the same in every chart. The first twelve have
 * twelve colours and twelve markers; from the 13th on the marker cycle shifts by one each round of
 * twelve, so no two of the first 144 series share both colour and marker.
 */
export function seriesStyle(i: number): SeriesStyle {
  if (!Number.isInteger(i) || i < 0) throw new RangeError(`expected a series index ≥ 0, got ${i}`);
  const color = PALETTE[i % PALETTE.length]!;
  const m = (i + Math.floor(i / PALETTE.length)) % (2 * MARKER_SHAPES.length);
  return { color, marker: MARKER_SHAPES[m % MARKER_SHAPES.length]!, hollow: m >= MARKER_SHAPES.length };
}

/** Colour of the i-th series: {@link seriesStyle}'s. */
export function paletteColor(i: number): string {
  return seriesStyle(i).color;
}

function rgb(hex: string): [number, number, number] {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new RangeError(`expected a colour as #rrggbb, got ${hex}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}

const linear = (c: number): number => {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
};

/** WCAG relative luminance of an sRGB colour (0 black … 1 white): what a greyscale print keeps. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two colours (1 … 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** CIELAB (D65) of an sRGB colour: [L*, a*, b*]. L* is the lightness a greyscale print shows. */
export function cielab(hex: string): [number, number, number] {
  const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number): number => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/** Colour difference ΔE*76: the Euclidean distance in CIELAB (about 2.3 is just noticeable). */
export function deltaE(a: string, b: string): number {
  const [p, q] = [cielab(a), cielab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

/**
 * The opaque colour that `hex` at `opacity` over white shows: a ± sd band filled with it hides the
 * bands beneath instead of mixing with them into a colour no series has.
 */
export function tint(hex: string, opacity: number): string {
  return (
    '#' +
    rgb(hex)
      .map((c) =>
        Math.round(255 - (255 - c) * opacity)
          .toString(16)
          .padStart(2, '0'),
      )
      .join('')
  );
}

/** A marker as SVG, centred on (x, y), about 2r across. */
export function markerSvg(style: SeriesStyle, x: number, y: number, r: number): string {
  const fill = style.hollow ? '#ffffff' : style.color;
  const paint = `fill="${fill}" stroke="${style.color}" stroke-width="1.2"`;
  const f = (v: number): string => v.toFixed(1);
  const poly = (pts: readonly [number, number][]): string =>
    `<polygon points="${pts.map(([a, b]) => `${f(x + a * r)},${f(y + b * r)}`).join(' ')}" ${paint}/>`;
  switch (style.marker) {
    case 'circle':
      return `<circle cx="${f(x)}" cy="${f(y)}" r="${f(r)}" ${paint}/>`;
    case 'square':
      return `<rect x="${f(x - r * 0.85)}" y="${f(y - r * 0.85)}" width="${f(r * 1.7)}" height="${f(r * 1.7)}" ${paint}/>`;
    case 'triangle':
      return poly([
        [0, -1.15],
        [1.05, 0.8],
        [-1.05, 0.8],
      ]);
    case 'triangle-down':
      return poly([
        [0, 1.15],
        [1.05, -0.8],
        [-1.05, -0.8],
      ]);
    case 'diamond':
      return poly([
        [0, -1.2],
        [1.05, 0],
        [0, 1.2],
        [-1.05, 0],
      ]);
    case 'plus': {
      const a = 0.38;
      return poly([
        [-a, -1.1],
        [a, -1.1],
        [a, -a],
        [1.1, -a],
        [1.1, a],
        [a, a],
        [a, 1.1],
        [-a, 1.1],
        [-a, a],
        [-1.1, a],
        [-1.1, -a],
        [-a, -a],
      ]);
    }
  }
}
