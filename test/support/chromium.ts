// Suites that need a real browser (headless Chromium, driven by puppeteer-core). On a machine without
// one they are skipped, saying how to install it, so that `npm test` still runs everything else; CI
// (`.ci/run`) sets CORL_REQUIRE_BROWSER=1, which turns a missing browser into a failing test instead.
import { CHROMIUM_INSTALL, findChromium } from '../../scripts/report-browser';

let warned = false;

/** `describe` with the browser's path, when Chromium is installed; otherwise a skipped (or, under CORL_REQUIRE_BROWSER=1, failing) suite. */
export function describeWithChromium(title: string, fn: (this: Mocha.Suite, chromium: string) => void): void {
  const chromium = findChromium();
  if (chromium !== null) {
    describe(title, function () {
      fn.call(this, chromium);
    });
    return;
  }
  const given = process.env.CORL_CHROMIUM;
  const missing = given ? `CORL_CHROMIUM names ${given}, which does not exist` : 'Chromium is not installed';
  const how = `${CHROMIUM_INSTALL}, or set CORL_CHROMIUM to a Chromium or Chrome binary`;
  if (process.env.CORL_REQUIRE_BROWSER === '1') {
    describe(title, () => {
      it('needs Chromium, which CORL_REQUIRE_BROWSER=1 requires', () => {
        throw new Error(`no Chromium found (${missing}): ${how}`);
      });
    });
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(`  [corl] ${missing}: the browser checks of the report are skipped (${how})`);
  }
  describe.skip(`${title} (needs Chromium: ${how})`, () => {
    it('runs when Chromium is installed');
  });
}
