// Suites that need bubblewrap (the sandbox of `corl:exec-*`). The sandbox is a trust boundary, so
// these suites always run: a machine without bubblewrap fails them with the command that installs
// it. There is no switch to skip them; an untested sandbox is an unknown boundary.
import { findBwrap } from '../../plugins/rewards/sandbox/bwrap';

const INSTALL = 'apt-get install -y bubblewrap';

/** `describe`, when bubblewrap is installed; otherwise a suite that fails, saying how to install it. */
export function describeWithBwrap(title: string, fn: (this: Mocha.Suite) => void): void {
  if (findBwrap('') !== null) {
    describe(title, fn);
    return;
  }
  describe(title, () => {
    it('needs bubblewrap', () => {
      throw new Error(`bubblewrap (bwrap) is not installed: ${INSTALL}`);
    });
  });
}
