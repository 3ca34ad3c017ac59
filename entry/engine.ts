/**
 * `corl/engine`: the engine's internals for code that builds on corl's machinery rather than writing
 * plugins: the plugin registry and run containers (a run's own tokens: `PLUGIN_REGISTRY`,
 * `INTERACTION`), atomic writes and the catalog of error codes. Importing it registers nothing;
 * `installBuiltins()` wires the built-in plugins into corl's own container (never tsyringe's root).
 */
export { installBuiltins } from './builtins';
export { PluginRegistry, PLUGIN_REGISTRY, registryOf } from '../core/registry/registry';
export { corlContainer, createRunContainer } from '../core/registry/container';
export { INTERACTION } from '../core/contracts/interaction';
export type { DependencyContainer } from 'tsyringe';
export { writeFileAtomic, writeJsonAtomic } from '../core/util/fs';
export { ERROR_CODES, type ErrorSpec } from '../core/errors/codes';
export { describeError } from '../core/errors/error';
