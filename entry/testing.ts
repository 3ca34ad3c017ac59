/**
 * `corl/testing`: the contract suites and test helpers. Importing it wires the built-in plugins into
 * corl's own container (never tsyringe's root), since its suites build instances as a run does.
 */
import { installBuiltins } from './builtins';

installBuiltins();

export * from '../core/testing';
