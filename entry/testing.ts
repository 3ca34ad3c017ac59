/**
 * `corl/testing`: the contract suites and test helpers. Importing it provides the built-in plugins to
 * corl's own container (recorded, loaded when a suite first builds an instance; never tsyringe's
 * root), since its suites build instances as a run does.
 */
import { installBuiltins } from './builtins';

installBuiltins();

export * from '../core/testing';
