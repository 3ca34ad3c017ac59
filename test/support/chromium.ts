// Suites that need a real browser (headless Chromium, driven by puppeteer-core). They always run: a
// machine without a browser fails them with the command that installs one. There is no switch to
// skip them.
import { CHROMIUM_INSTALL, findChromium } from '../../scripts/report-browser';

/** `describe` with the browser's path, when Chromium is installed; otherwise a suite that fails, saying how to get one. */
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
  describe(title, () => {
    it('needs Chromium', () => {
      throw new Error(
        `no Chromium found (${missing}): ${CHROMIUM_INSTALL}, or set CORL_CHROMIUM to a Chromium or Chrome binary`,
      );
    });
  });
}
