/** Loaded by mocha before any spec (.mocharc.json): the built-in plugins, wired as the entry points wire them. */
import { installBuiltins } from '../entry/builtins';

installBuiltins();
