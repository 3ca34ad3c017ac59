import 'reflect-metadata';
import type { DependencyContainer } from 'tsyringe';
import { corlContainer, provideBuiltins } from '../core/registry/container';

/**
 * Wire corl's built-in plugins into corl's own container (never tsyringe's root), so every run
 * container created under it has them. Entry points call this when they are used, not when they are
 * imported (`corl/testing` is the one exception: its suites need the built-ins from the start); it
 * may be called any number of times. The core itself never imports `plugins/`, and `plugins/` is
 * loaded only when a run container first asks for the built-ins.
 */
export function installBuiltins(parent: DependencyContainer = corlContainer()): void {
  provideBuiltins((container) => {
    // Loaded here rather than at the top: importing an entry point loads no plugin (nor onnxruntime).
    const plugins = require('../plugins') as typeof import('../plugins');
    return plugins.register(container);
  }, parent);
}
