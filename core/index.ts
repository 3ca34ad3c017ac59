import 'reflect-metadata';

export * from './contracts';
export * from './errors';
export { PluginRegistry, PLUGIN_REGISTRY, registryOf } from './registry/registry';
export { definePlugin, fromClass, registerAll, type RegisterFunction } from './registry/define';
export type { DependencyContainer } from 'tsyringe';
export * as grpo from './grpo';
export * as tensor from './tensor';
export { Rng, mixSeed } from './util/rng';
export { pluralityVote, type VoteOutcome, type VoteCluster } from './voting/plurality';
export { matches, matchesAtOnce } from './voting/match';
export { writeFileAtomic, writeJsonAtomic } from './util/fs';
export { RunAppendFile, type AppendRun } from './util/run-append';
export { CORL_VERSION } from './version';
