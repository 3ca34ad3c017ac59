import { defineCodes } from './spec';

export const SANDBOX_CODES = defineCodes({
  CORL_ERR_SANDBOX_UNAVAILABLE: {
    cause: 'Generated code cannot be run as configured: no python3 interpreter was found, or `isolation: "namespace"` was asked for on a machine where mount/network/PID namespaces (unshare, setpriv) do not work.',
    fix: 'install python3 (or set the option `python`), run where namespaces are allowed (root, or unprivileged user namespaces enabled), or use `isolation: "auto"`',
  },
});
