import { defineCodes } from './spec';

export const SANDBOX_CODES = defineCodes({
  CORL_ERR_SANDBOX_UNAVAILABLE: {
    cause:
      'Generated code cannot be run as configured: no python3 interpreter was found, or the one named by the option `python` does not start.',
    fix: 'install python3 (Debian/Ubuntu: `apt-get install -y python3`) or set the option `python` to a working interpreter',
  },
  CORL_ERR_SANDBOX_BWRAP_MISSING: {
    cause:
      'A code reward (`corl:exec-vote`, `corl:exec-tests`) runs generated code in a bubblewrap sandbox (`isolation: "auto"` or `"bwrap"`), and bubblewrap is not installed (no /usr/bin/bwrap, none on PATH, or none at the path the option `bwrap` names). corl refuses to run untrusted code unisolated unless told to.',
    fix: 'install bubblewrap (Debian/Ubuntu: `apt-get install -y bubblewrap`; Fedora: `dnf install bubblewrap`) or set the option `bwrap` to its path; only for code you trust, `isolation: "unsafe-process"` runs it without isolation (with a warning on every run)',
  },
  CORL_ERR_SANDBOX_BWRAP_FAILED: {
    cause:
      'bubblewrap is installed but cannot build the sandbox on this machine: creating user, PID or network namespaces is not allowed (unprivileged user namespaces disabled, a container without the rights, an AppArmor rule), or the interpreter cannot start inside it. The message quotes bwrap.',
    fix: 'allow user namespaces (`sysctl kernel.unprivileged_userns_clone=1` or `user.max_user_namespaces` above 0; a container needs the rights to unshare), or, only for code you trust, set `isolation: "unsafe-process"`',
  },
});
