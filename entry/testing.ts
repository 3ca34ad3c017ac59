/** `corl/testing`: the contract suites and test helpers, with the built-in plugins wired in. */
import { installBuiltins } from './builtins';

installBuiltins();

export * from '../core/testing';
