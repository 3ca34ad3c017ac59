import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { provideBuiltins } from '../core/registry/container';
import { register } from '../plugins';

/**
 * Wire corl's built-in plugins into the root container, so every run container has them. Each
 * entry point (the library, `corl/testing`, the CLI) calls this once; the core itself never
 * imports `plugins/`.
 */
export function installBuiltins(parent: DependencyContainer = rootContainer): void {
  provideBuiltins(register, parent);
}
