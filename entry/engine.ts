/**
 * `corl/engine`: the engine's internals for code that builds on corl's machinery rather than writing
 * plugins: the plugin registry and run containers, the container tokens a plugin instance's own
 * container holds, atomic writes and the catalog of error codes. Importing it registers nothing;
 * `installBuiltins()` wires the built-in plugins into corl's own container (never tsyringe's root).
 */
export { installBuiltins } from './builtins';
export { PluginRegistry, PLUGIN_REGISTRY, registryOf } from '../core/registry/registry';
export { corlContainer, createRunContainer } from '../core/registry/container';
export { PLUGIN_CONTEXT, PLUGIN_OPTIONS } from '../core/contracts/plugin';
export { GROUND_TRUTH } from '../core/contracts/problem';
export { TASK } from '../core/contracts/task';
export { ANSWER_EXTRACTOR } from '../core/contracts/answer-extractor';
export { EQUIVALENCE } from '../core/contracts/equivalence';
export { TOPOLOGY } from '../core/contracts/topology';
export { DIVERSITY_STRATEGY } from '../core/contracts/diversity-strategy';
export { ADVANTAGE_ESTIMATOR } from '../core/contracts/advantage-estimator';
export { INTERACTION } from '../core/contracts/interaction';
export { writeFileAtomic, writeJsonAtomic } from '../core/util/fs';
export { ERROR_CODES, type ErrorSpec } from '../core/errors/codes';
export { describeError } from '../core/errors/error';
