// Suites that need bubblewrap (the sandbox of `corl:exec-*`). The sandbox is a trust boundary, so a
// machine without bubblewrap fails these suites with the command that installs it; nothing is
// skipped unless the person running the tests says so with CORL_SKIP_BWRAP=1, and the skipped
// suites then stay listed as pending, naming what they need.
import { findBwrap } from '../../plugins/rewards/sandbox/bwrap';

const INSTALL = 'apt-get install -y bubblewrap';

/** `describe`, when bubblewrap is installed; otherwise a failing suite (a pending one under CORL_SKIP_BWRAP=1). */
export function describeWithBwrap(title: string, fn: (this: Mocha.Suite) => void): void {
  if (findBwrap('') !== null) {
    describe(title, fn);
    return;
  }
  if (process.env.CORL_SKIP_BWRAP === '1') {
    describe.skip(`${title} (skipped by CORL_SKIP_BWRAP=1; needs bubblewrap: ${INSTALL})`, () => {
      it('runs when bubblewrap is installed');
    });
    return;
  }
  describe(title, () => {
    it('needs bubblewrap', () => {
      throw new Error(
        `bubblewrap (bwrap) is not installed: ${INSTALL} (or CORL_SKIP_BWRAP=1 to leave the sandbox untested)`,
      );
    });
  });
}
