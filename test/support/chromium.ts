// Suites that need a real browser (headless Chromium, driven by puppeteer-core). A machine without one
// fails these suites with the command that installs it; nothing is skipped unless the person running
// the tests says so with CORL_SKIP_BROWSER=1, and the skipped suites then stay listed as pending.
import { CHROMIUM_INSTALL, findChromium } from '../../scripts/report-browser';

/** `describe` with the browser's path, when Chromium is installed; otherwise a failing suite (a pending one under CORL_SKIP_BROWSER=1). */
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
  if (process.env.CORL_SKIP_BROWSER === '1') {
    describe.skip(`${title} (skipped by CORL_SKIP_BROWSER=1; needs Chromium: ${how})`, () => {
      it('runs when Chromium is installed');
    });
    return;
  }
  describe(title, () => {
    it('needs Chromium', () => {
      throw new Error(
        `no Chromium found (${missing}): ${how} (or CORL_SKIP_BROWSER=1 to leave the browser checks untested)`,
      );
    });
  });
}
