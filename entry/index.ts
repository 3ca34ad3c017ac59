/** The package's main entry (`require('corl')`): the core API, with the built-in plugins wired in. */
import { installBuiltins } from './builtins';

installBuiltins();

export * from '../core';
