/** The `corl` command: the built-in plugins wired in (into corl's own container) when it runs, then the CLI. */
import { main as run } from '../core/cli/main';
import { installBuiltins } from './builtins';

export { buildProgram } from '../core/cli/main';
/** What the `corl` binary calls first: a folder lock lost to another holder stops the process (exit 75). */
export { stopProcessOnLostLock } from '../core/util/folder-lock';

/** Run the `corl` command line; resolves to the exit code. */
export function main(...args: Parameters<typeof run>): ReturnType<typeof run> {
  installBuiltins();
  return run(...args);
}
