import type { DependencyContainer } from 'tsyringe';
import { provideBuiltins } from '../core/registry/container';

/**
 * Wire corl's built-in plugins into `parent`, by default corl's own container (never tsyringe's
 * root), so every run container created under it has them. The API and the CLI call this when they
 * run, `corl/testing` when it is imported; by default it only records them, loading nothing, and it
 * may be called any number of times. The core itself never imports `plugins/`, and `plugins/` is
 * loaded only when a run container first asks for the built-ins.
 */
export function installBuiltins(parent?: DependencyContainer): void {
  provideBuiltins((container) => {
    // Loaded here rather than at the top: importing an entry point loads no plugin (nor onnxruntime).
    const plugins = require('../plugins') as typeof import('../plugins');
    return plugins.register(container);
  }, parent);
}
