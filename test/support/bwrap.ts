// Suites that need bubblewrap (the sandbox of `corl:exec-*`). On a machine without it they are
// skipped, saying how to install it, so that `npm test` still runs everything else; CI sets
// CORL_REQUIRE_BWRAP=1, which turns a missing bubblewrap into a failing test instead.
import { findBwrap } from '../../plugins/rewards/sandbox/bwrap';

const INSTALL = 'apt-get install -y bubblewrap';
let warned = false;

/** `describe`, when bubblewrap is installed; otherwise a skipped (or, under CORL_REQUIRE_BWRAP=1, failing) suite. */
export function describeWithBwrap(title: string, fn: (this: Mocha.Suite) => void): void {
  if (findBwrap('') !== null) {
    describe(title, fn);
    return;
  }
  if (process.env.CORL_REQUIRE_BWRAP === '1') {
    describe(title, () => {
      it('needs bubblewrap, which CORL_REQUIRE_BWRAP=1 requires', () => {
        throw new Error(`bubblewrap (bwrap) is not installed: ${INSTALL}`);
      });
    });
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(`  [corl] bubblewrap is not installed: the sandbox suites are skipped (${INSTALL} runs them)`);
  }
  describe.skip(`${title} (needs bubblewrap: ${INSTALL})`, () => {
    it('runs when bubblewrap is installed');
  });
}
