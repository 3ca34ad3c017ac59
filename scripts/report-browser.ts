// The report in a real browser: headless Chromium through puppeteer-core (which never downloads a
// browser of its own). Used by the browser test (test/integrations/browser.test.ts) and by
// `npm run screenshots`, which draws the report guide's pictures.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cielab, deltaE } from '../core/report/palette';

type Puppeteer = typeof import('puppeteer-core');
type Browser = import('puppeteer-core').Browser;
type Page = import('puppeteer-core').Page;

/** The apt command that installs the browser the checks use (what `.ci/run` runs when it is missing). */
export const CHROMIUM_INSTALL = 'apt-get install -y chromium';

/** Where {@link findChromium} looks, in order, when $CORL_CHROMIUM is not set: Debian's package first. */
export const CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
] as const;

/** The Chromium binary: $CORL_CHROMIUM, else the first of {@link CHROMIUM_PATHS} that exists; null when none. */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  exists: (file: string) => boolean = fs.existsSync,
): string | null {
  const given = env.CORL_CHROMIUM;
  if (given) return exists(given) ? given : null;
  return CHROMIUM_PATHS.find((p) => exists(p)) ?? null;
}

/** Start headless Chromium. As root (CI, containers) Chromium's own sandbox cannot start, so it is switched off there. */
export async function launchChromium(executablePath: string): Promise<Browser> {
  const puppeteer = require('puppeteer-core') as Puppeteer;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: [...(root ? ['--no-sandbox'] : []), '--disable-gpu', '--font-render-hinting=none'],
  });
}

/** One drawn series of a chart, as the browser shows it. */
export interface DrawnSeries {
  readonly chart: string;
  /** Position among the series given to the chart (the config's, or the agent's): what its style follows. */
  readonly index: number;
  readonly name: string;
  /** The line's computed stroke, as #rrggbb. */
  readonly color: string;
  /** The legend marker's geometry: element, corners, orientation and whether it is hollow. */
  readonly marker: string;
}

/** What the browser saw on a report page. */
export interface ReportInspection {
  /** Console errors, page errors and failed requests. */
  readonly errors: readonly string[];
  /** Text that leaves its box: an HTML element wider than itself, SVG text outside its chart or on other text. */
  readonly overflow: readonly string[];
  /** Legend entries not drawn (no box, hidden, empty) and lines without a legend entry. */
  readonly legend: readonly string[];
  /** Charts by title: how many series lines and legend entries each has. */
  readonly charts: readonly { readonly title: string; readonly lines: number; readonly legend: readonly string[] }[];
  readonly series: readonly DrawnSeries[];
  /** ± sd bands drawn translucent or blended (they must be opaque tints). */
  readonly blendingBands: readonly string[];
  /** Reference lines drawn inside their plot, by chart title. */
  readonly referenceLines: readonly { readonly chart: string; readonly width: number; readonly inside: boolean }[];
  /** The banner: its text, and whether it is the first thing on the page (above the title). */
  readonly banner: { readonly text: string; readonly atTop: boolean } | null;
}

// Runs inside the page (a string, since the compiled code has no DOM types).
const INSPECT = String.raw`(() => {
  const overflow = [], legend = [], charts = [], series = [], blendingBands = [], referenceLines = [];
  const hex = (c) => {
    const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(c);
    return m ? '#' + [m[1], m[2], m[3]].map((v) => Number(v).toString(16).padStart(2, '0')).join('') : c;
  };
  const describe = (el) => (el.textContent || '').trim().slice(0, 60);
  for (const el of document.querySelectorAll('h1, h2, p, td, th, .banner, .scroll'))
    if (el.scrollWidth > el.clientWidth + 1)
      overflow.push(el.tagName.toLowerCase() + ' "' + describe(el) + '" is ' + el.scrollWidth + 'px in a ' + el.clientWidth + 'px box');
  if (document.documentElement.scrollWidth > window.innerWidth)
    overflow.push('the page is ' + document.documentElement.scrollWidth + 'px wide in a ' + window.innerWidth + 'px window');
  for (const svg of document.querySelectorAll('svg')) {
    const title = svg.getAttribute('aria-label') || '';
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map((t) => ({ t, r: t.getBoundingClientRect() }));
    for (const { t, r } of texts) {
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        overflow.push('"' + describe(t) + '" leaves the chart "' + title + '"');
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].r, b = texts[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) overflow.push('"' + describe(texts[i].t) + '" and "' + describe(texts[j].t) + '" overlap in "' + title + '"');
      }
    const plot = svg.querySelector('rect.plot');
    const plotBox = plot ? plot.getBoundingClientRect() : null;
    const heads = [...svg.querySelectorAll('text.title, text.subtitle')].map((t) => t.getBoundingClientRect().bottom);
    if (plotBox && heads.length && Math.max(...heads) > plotBox.top + 0.5)
      overflow.push('the title of "' + title + '" runs into its plot');
    const lines = [...svg.querySelectorAll('path.series')];
    const entries = [...svg.querySelectorAll('g.legend-entry')];
    const names = [];
    for (const g of entries) {
      const r = g.getBoundingClientRect();
      const text = g.querySelector('text');
      const sample = g.querySelector('line');
      const cs = getComputedStyle(g);
      const name = (g.querySelector('title') || {}).textContent || '';
      names.push(name);
      const sr = sample ? sample.getBoundingClientRect() : { width: 0 };
      if (!(r.width > 0 && r.height > 0) || cs.visibility !== 'visible' || cs.display === 'none' || !text || !text.textContent.trim() || !(sr.width > 0))
        legend.push('legend entry "' + name + '" of "' + title + '" is not drawn');
      else if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5)
        legend.push('legend entry "' + name + '" of "' + title + '" is cut off');
    }
    for (const p of lines) {
      const i = p.getAttribute('data-series');
      const g = svg.querySelector('g.legend-entry[data-series="' + i + '"]');
      if (!g) { legend.push('a line of "' + title + '" has no legend entry'); continue; }
      const m = g.querySelector('circle, rect, polygon');
      let marker = 'none';
      if (m) {
        const pts = m.tagName === 'polygon' ? m.getAttribute('points').trim().split(/\s+/).map((q) => q.split(',').map(Number)) : [];
        const cy = pts.reduce((s, q) => s + q[1], 0) / (pts.length || 1);
        const up = pts.length ? (pts[0][1] < cy ? 'up' : 'down') : '';
        const hollow = hex(getComputedStyle(m).fill) === '#ffffff' ? 'hollow' : 'filled';
        marker = [m.tagName, pts.length, up, hollow].join(':');
      }
      series.push({ chart: title, index: Number(i), name: (g.querySelector('title') || {}).textContent || '', color: hex(getComputedStyle(p).stroke), marker });
    }
    for (const b of svg.querySelectorAll('polygon.band')) {
      const cs = getComputedStyle(b);
      if (Number(cs.fillOpacity) < 1 || Number(cs.opacity) < 1 || cs.mixBlendMode !== 'normal')
        blendingBands.push('a band of "' + title + '" is drawn translucent');
    }
    for (const l of svg.querySelectorAll('line.ref-line')) {
      const r = l.getBoundingClientRect();
      const inside = !!plotBox && r.top >= plotBox.top - 1 && r.bottom <= plotBox.bottom + 1 && r.left >= plotBox.left - 1 && r.right <= plotBox.right + 1;
      referenceLines.push({ chart: title, width: r.width, inside });
    }
    charts.push({ title, lines: lines.length, legend: names });
  }
  const first = document.body.firstElementChild;
  const h1 = document.querySelector('h1');
  const bannerEl = document.querySelector('.banner');
  const banner = bannerEl
    ? { text: bannerEl.textContent.trim(), atTop: first === bannerEl && !!h1 && bannerEl.getBoundingClientRect().bottom <= h1.getBoundingClientRect().top + 0.5 && bannerEl.getBoundingClientRect().height > 0 }
    : null;
  return { overflow, legend, charts, series, blendingBands, referenceLines, banner };
})()`;

/** Load an HTML file in a fresh page of `browser` (at `width` pixels) and inspect it. */
export async function inspectReport(browser: Browser, file: string, width = 1200): Promise<ReportInspection> {
  const page = await browser.newPage();
  try {
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`page error: ${(e as Error).message}`));
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
    await page.setViewport({ width, height: 900 });
    await page.goto(`file://${path.resolve(file)}`, { waitUntil: 'load' });
    const seen = (await page.evaluate(INSPECT)) as Omit<ReportInspection, 'errors'>;
    return { errors, ...seen };
  } finally {
    await page.close();
  }
}

/**
 * A PNG of an HTML file, `width` pixels wide: the page down to the bottom of the first element matching
 * `until` (the whole page when none is given or found), at most `maxHeight` pixels.
 */
export async function screenshot(
  browser: Browser,
  file: string,
  to: string,
  width = 1200,
  maxHeight = 1600,
  until?: string,
): Promise<void> {
  const page: Page = await browser.newPage();
  try {
    await page.setViewport({ width, height: 900 });
    await page.goto(`file://${path.resolve(file)}`, { waitUntil: 'load' });
    const bottom = (await page.evaluate(
      `(() => { const el = ${JSON.stringify(until ?? '')} && document.querySelector(${JSON.stringify(until ?? '')});
        return el ? Math.ceil(el.getBoundingClientRect().bottom + window.scrollY + 16) : document.documentElement.scrollHeight; })()`,
    )) as number;
    const height = Math.min(maxHeight, bottom);
    await page.screenshot({ path: to as `${string}.png`, clip: { x: 0, y: 0, width, height } });
  } finally {
    await page.close();
  }
}

/**
 * Pairs among the series of each chart whose index is under `limit` a reader could confuse: in colour, their
 * strokes are less than `minDeltaE` apart and their markers are the same; in greyscale, their
 * lightness (L*) is less than `minLightness` apart and their markers are the same.
 */
export function confusablePairs(
  series: readonly DrawnSeries[],
  limit = 12,
  minDeltaE = 15,
  minLightness = 10,
): { readonly colour: string[]; readonly greyscale: string[] } {
  const colour: string[] = [];
  const greyscale: string[] = [];
  const byChart = new Map<string, DrawnSeries[]>();
  for (const s of series) (byChart.get(s.chart) ?? byChart.set(s.chart, []).get(s.chart)!).push(s);
  for (const [chart, all] of byChart) {
    const list = all.filter((s) => s.index < limit);
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!;
        const b = list[j]!;
        if (a.marker !== b.marker) continue;
        if (deltaE(a.color, b.color) < minDeltaE) colour.push(`${chart}: ${a.name} / ${b.name}`);
        if (Math.abs(cielab(a.color)[0] - cielab(b.color)[0]) < minLightness)
          greyscale.push(`${chart}: ${a.name} / ${b.name}`);
      }
  }
  return { colour, greyscale };
}

/** Absolute paths of the machine that wrote a report (its checkout, home, temporary folders). */
export function machinePaths(html: string): string[] {
  return [...html.matchAll(/(?<![\w.:/])\/(?:work|tmp|home|root|Users|var\/folders)\/[^\s"'<>]*/g)].map((m) => m[0]);
}
