// corl/testing: the contract every plugin kind must keep, as test suites any plugin runs (the
// built-ins run the same ones), plus what writing those tests needs: instances built exactly as a
// run builds them, reward contexts from answer keys, and a tiny trainable policy for quick runs.
import 'reflect-metadata';
import type { PluginDefinition, PluginKind } from '../contracts/plugin';
import { CorlError } from '../errors';
import { registerAll, type RegisterFunction } from '../registry/define';
import { advantageContract } from './advantage';
import { categoricalPolicy } from './categorical-policy';
import type { KitOptions } from './common';
import { diversityContract, type DiversityKitOptions } from './diversity';
import { equivalenceContract, type EquivalenceKitOptions } from './equivalence';
import { extractorContract, type ExtractorKitOptions } from './extractor';
import { interactionContract, type InteractionKitOptions } from './interaction';
import { judgeContract, type JudgeKitOptions } from './judge';
import { metricsContract, type MetricsKitOptions } from './metrics';
import { policyContract, type PolicyKitOptions } from './policy';
import { rewardContract, type RewardKitOptions } from './reward';
import { taskContract } from './task';
import { topologyContract, type TopologyKitOptions } from './topology';

export { resolveRunner, type SuiteOptions, type TestBody, type TestRunner } from './runner';
export { createPlugin, pluginOptions, pluginRegistry, type CreateOptions, type LabelFreeServices } from './create';
export {
  completionText,
  exactEquivalence,
  groundTruthTripwire,
  rewardContext,
  type GroundTruthTripwire,
  type RewardContextSpec,
} from './contexts';
export { findLeaks, labelChecks, LEAK_CANARY } from './leaks';
export { commonChecks, wrongValue, type Check, type InvalidOptions, type KitOptions } from './common';
export { rewardChecks, rewardContract, rewardScenarios, type RewardKitOptions } from './reward';
export { topologyChecks, topologyContract, type TopologyKitOptions } from './topology';
export { diversityChecks, diversityContract, diversityProblems, type DiversityKitOptions } from './diversity';
export { extractorChecks, extractorContract, hostileTexts, type ExtractorKitOptions } from './extractor';
export { equivalenceChecks, equivalenceContract, sampleAnswers, type EquivalenceKitOptions } from './equivalence';
export { advantageChecks, advantageContract, rewardBatches } from './advantage';
export { policyChecks, policyContract, updateBatch, type PolicyKitOptions } from './policy';
export { taskChecks, taskContract } from './task';
export {
  debateScoreBatches,
  interactionChecks,
  interactionContract,
  neighbourLayouts,
  type InteractionKitOptions,
} from './interaction';
export { judgeChecks, judgeContract, judgeRequests, type JudgeKitOptions } from './judge';
export { metricsChecks, metricsContract, sampleRecords, type MetricsKitOptions } from './metrics';
export {
  CategoricalPolicy,
  categoricalPolicy,
  nucleus,
  temperedSoftmax,
  type CategoricalPolicyOptions,
} from './categorical-policy';

/** Options of {@link contractSuite}: those of the plugin's kind. */
export type AnyKitOptions = KitOptions &
  RewardKitOptions &
  TopologyKitOptions &
  DiversityKitOptions &
  ExtractorKitOptions &
  EquivalenceKitOptions &
  PolicyKitOptions &
  MetricsKitOptions &
  InteractionKitOptions &
  JudgeKitOptions;

/** The contract suite of whatever kind `plugin` is. */
export function contractSuite(plugin: PluginDefinition<PluginKind>, kit: AnyKitOptions = {}): void {
  const kind = plugin?.manifest?.kind;
  switch (kind) {
    case 'reward':
      return rewardContract(plugin as PluginDefinition<'reward'>, kit);
    case 'topology':
      return topologyContract(plugin as PluginDefinition<'topology'>, kit);
    case 'diversity':
      return diversityContract(plugin as PluginDefinition<'diversity'>, kit);
    case 'extractor':
      return extractorContract(plugin as PluginDefinition<'extractor'>, kit);
    case 'equivalence':
      return equivalenceContract(plugin as PluginDefinition<'equivalence'>, kit);
    case 'advantage':
      return advantageContract(plugin as PluginDefinition<'advantage'>, kit);
    case 'policy':
      return policyContract(plugin as PluginDefinition<'policy'>, kit);
    case 'task':
      return taskContract(plugin as PluginDefinition<'task'>, kit);
    case 'metrics':
      return metricsContract(plugin as PluginDefinition<'metrics'>, kit);
    case 'interaction':
      return interactionContract(plugin as PluginDefinition<'interaction'>, kit);
    case 'judge':
      return judgeContract(plugin as PluginDefinition<'judge'>, kit);
    default:
      throw new CorlError(
        'CORL_ERR_TESTING_SETUP',
        `expected a plugin definition with a known manifest.kind, got ${JSON.stringify(kind)}`,
      );
  }
}

/**
 * Registers `testing:categorical`, so a config can train against it: `"plugins": ["corl/testing", "./dist/index.js"]`.
 */
export const register: RegisterFunction = registerAll(categoricalPolicy);
