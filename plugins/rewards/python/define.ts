// definePythonReward: a named reward plugin around corl:python's machinery, exported by corl's main
// module. Its public types are written out here (not derived with json-schema-to-ts, a development
// dependency corl's published types must not need); test/plugins/rewards/python/define.test.ts fails
// the build when PythonRuntimeOptions and the schema's FromSchema differ.
import type { FromSchema } from 'json-schema-to-ts';
import type { PluginContext, PluginDefinition } from '../../../core/contracts/plugin';
import type { RewardSource } from '../../../core/contracts/reward-source';
import { definePlugin } from '../../../core/registry/define';
import { createPythonReward, FUNCTION_PROPERTIES, RUNTIME_OPTIONS_SCHEMA } from './plugin';

/** The options, as validated and defaulted by the schema (derived from it; the public type is {@link PythonRuntimeOptions}). */
type RuntimeOptions = FromSchema<typeof RUNTIME_OPTIONS_SCHEMA>;

/** The options a config gives a reward made with {@link definePythonReward} (corl:python's runtime options, defaults applied). */
export interface PythonRuntimeOptions {
  /** The interpreter: a name on PATH or a path relative to the config file. Default `python3`. */
  readonly python: string;
  /** `group`: one call per group of completions (default); `step`: one per agent and step. */
  readonly batch: 'group' | 'step';
  /** How `pseudo_label` is voted from the supervisors' answers (as corl:vote's `rule`). Default `pool`. */
  readonly labelRule: 'pool' | 'teacher' | 'majority';
  /** Minimum vote share of `pseudo_label`. Default 0. */
  readonly labelThreshold: number;
  /** Limit on the import and on one step's calls, in seconds. Default 300. */
  readonly timeoutSeconds: number;
  /** The function's prints: `forward` to corl's stderr (default) or `discard`. */
  readonly stderr: 'forward' | 'discard';
}

/** What {@link definePythonReward} fixes: the plugin's name and the function it calls. */
export interface PythonRewardDefinition {
  /** The plugin's name, `scope:name` (e.g. `lab:majority-steps`). */
  readonly name: string;
  /** One line for `corl list` and the docs. */
  readonly description: string;
  /** The Python file (an absolute path, e.g. `path.join(__dirname, '../../reward.py')`) or a dotted module name. */
  readonly module: string;
  /** The function (default: reward_func for "trl", compute_score for "verl"). */
  readonly function?: string;
  /** `trl` (default) or `verl`, as corl:python's `signature`. */
  readonly signature?: 'trl' | 'verl';
  /** Whether the function reads the reference (default false: label-free). */
  readonly groundTruth?: boolean;
  /** The keyword of the reference for a TRL-style function (default `solution`). */
  readonly referenceColumn?: string;
  /** `standard` (default) or `conversational` prompts and completions. */
  readonly format?: 'standard' | 'conversational';
  /** The corl versions it supports (default `^0.1.0`). */
  readonly corl?: string;
}

/**
 * A named reward plugin backed by a Python function: what corl:python does, with the module and
 * function fixed in code and the runtime options (interpreter, batching, label rule, timeout) left
 * to the config. A plugin package registers it like any other (`registerAll(myReward)`), so a
 * config selects it by name and `rewardContract` from `corl/testing` checks it.
 *
 * ```ts
 * export const majoritySteps = definePythonReward({
 *   name: 'lab:majority-steps',
 *   description: 'Majority agreement, 0 when a written step is wrong',
 *   module: path.join(__dirname, '..', '..', 'reward.py'),
 * });
 * ```
 */
export function definePythonReward(def: PythonRewardDefinition): PluginDefinition<'reward', PythonRuntimeOptions> {
  const signature = def.signature ?? 'trl';
  const fixed = {
    module: def.module,
    function: def.function ?? (signature === 'verl' ? 'compute_score' : 'reward_func'),
    signature,
    groundTruth: def.groundTruth ?? false,
    referenceColumn: def.referenceColumn ?? 'solution',
    format: def.format ?? 'standard',
  } as const;
  return definePlugin({
    manifest: {
      name: def.name,
      kind: 'reward',
      description: def.description,
      corl: def.corl ?? '^0.1.0',
      readsGroundTruth: fixed.groundTruth,
      options: RUNTIME_OPTIONS_SCHEMA,
    },
    create(options: RuntimeOptions, ctx: PluginContext): Promise<RewardSource> {
      return createPythonReward({ ...options, ...fixed }, ctx, (option) =>
        option in FUNCTION_PROPERTIES
          ? `${def.name} (its ${option}, ${JSON.stringify((fixed as Record<string, unknown>)[option] ?? '')})`
          : `${def.name} options.${option}`,
      );
    },
  });
}
