// `npm run screenshots`: the pictures of docs/guide/reading-the-report.md, drawn by headless Chromium
// (puppeteer-core) from two reports: the default job's (what `npm start` writes) and the committed
// comparison docs/results/slips/report.html.
//
//   npm run screenshots                  # runs the default job into runs/screenshots-default first (as npm start does; a finished one is reused)
//   npm run screenshots -- runs/compare-… # or takes the folder an `npm start` already wrote
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCompare } from '../core/compare/run';
import { installBuiltins } from '../entry/builtins';
import { compressPng } from './png';
import { CHROMIUM_INSTALL, findChromium, launchChromium, screenshot } from './report-browser';

const ROOT = path.resolve(__dirname, '../..');
const IMAGES = path.join(ROOT, 'docs', 'images');

/** The configs and seeds of the default job: what `npm start` (package.json) passes to `corl compare`. */
export function defaultJob(root: string = ROOT): { configs: string[]; seeds: number } {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const m = /\bcompare((?:\s+\S+\.json)+)\s+--seeds\s+(\d+)/.exec(pkg.scripts.start);
  if (!m) throw new Error(`npm start is not a corl compare of configs: ${pkg.scripts.start}`);
  return { configs: m[1]!.trim().split(/\s+/), seeds: Number(m[2]) };
}

/** The pictures: file name under docs/images, the report, and how much of the page (from the top) they show. */
export interface Shot {
  readonly name: string;
  readonly report: string;
  /** CSS selector of the last element shown: the table and the charts, not the agreement table below. */
  readonly until: string;
  readonly maxHeight: number;
}

async function main(argv: readonly string[]): Promise<void> {
  const chromium = findChromium();
  if (!chromium)
    throw new Error(`no Chromium found: ${CHROMIUM_INSTALL}, or set CORL_CHROMIUM to a Chromium or Chrome binary`);
  let folder = argv[0];
  if (folder === undefined) {
    installBuiltins();
    folder = path.join(ROOT, 'runs', 'screenshots-default');
    const job = defaultJob();
    process.stderr.write(
      `running the default job (${job.configs.join(' ')}, ${job.seeds} seed) into ${path.relative(ROOT, folder)}\n`,
    );
    await runCompare({
      configs: job.configs.map((c) => path.join(ROOT, c)),
      seeds: job.seeds,
      out: folder,
      progress: 'none',
      verdict: true,
      log: (l) => process.stderr.write(l + '\n'),
    });
  }
  const shots: Shot[] = [
    { name: 'report-default.png', report: path.join(folder, 'report.html'), until: '.charts', maxHeight: 2400 },
    {
      name: 'report-comparison.png',
      report: path.join(ROOT, 'docs', 'results', 'slips', 'report.html'),
      until: '.charts',
      maxHeight: 2400,
    },
  ];
  fs.mkdirSync(IMAGES, { recursive: true });
  const browser = await launchChromium(chromium);
  try {
    for (const s of shots) {
      if (!fs.existsSync(s.report)) throw new Error(`no report at ${s.report}: run npm start, or corl report <folder>`);
      const to = path.join(IMAGES, s.name);
      await screenshot(browser, s.report, to, 1200, s.maxHeight, s.until);
      fs.writeFileSync(to, compressPng(fs.readFileSync(to))); // 256 colours: a third of Chromium's size
      process.stdout.write(`${path.relative(ROOT, to)}: ${Math.round(fs.statSync(to).size / 1024)} KB\n`);
    }
  } finally {
    await browser.close();
  }
}

if (require.main === module)
  main(process.argv.slice(2)).catch((e: Error) => {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  });
