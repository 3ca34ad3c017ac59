/** The `corl` command: the built-in plugins wired in, then the CLI. */
import { installBuiltins } from './builtins';

installBuiltins();

export { main, buildProgram } from '../core/cli/main';
