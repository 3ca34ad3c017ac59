import type { ExtendedJSONSchema, FromExtendedSchema } from 'json-schema-to-ts';
import type { ManifestQueryContext, PluginContext, PluginKind, ResolvedSelection } from '../../core/contracts/plugin';
import type { AnswerKeyInput, RewardContext, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import type { WorkOptions } from '../../core/contracts/work';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { checkResult } from '../../core/reward/checks';
import { mean } from '../../core/util/mean';

/** corl's schema keyword for a nested plugin selection, `{ corlPlugin: kind }`. */
type CorlPluginKeyword = { corlPlugin: PluginKind };

const WEIGHTED_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['sources'],
  properties: {
    sources: {
      type: 'array',
      minItems: 1,
      description: 'the parts: each a reward selection and its weight',
      items: {
        type: 'object',
        required: ['source'],
        properties: {
          source: { corlPlugin: 'reward', description: 'a reward source, by name or {use, options}' },
          weight: { type: 'number', default: 1, description: 'its weight in the sum' },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const satisfies ExtendedJSONSchema<CorlPluginKeyword>;

/**
 * The options, as validated and defaulted by the schema (derived from it, so the two cannot drift).
 * A `corlPlugin` property is a nested selection, which the validator has already resolved.
 */
type WeightedOptions = FromExtendedSchema<
  CorlPluginKeyword,
  typeof WEIGHTED_OPTIONS_SCHEMA,
  { deserialize: [{ pattern: { corlPlugin: 'reward' }; output: ResolvedSelection }] }
>;

/**
 * A weighted sum of reward sources, each with its own options: r_k = Σ_i w_i r_i,k. A part sees the
 * reference only if its own manifest declares ground truth; the label (for metrics) and the answer
 * keys peers vote with come from the first part that has them. Part metrics are reported as
 * `weighted/<i>/<name>`, with each part's mean reward as `weighted/<i>/reward`.
 */
export const weightedReward = definePlugin({
  manifest: {
    name: 'corl:weighted',
    kind: 'reward',
    description: 'Weighted sum of several reward sources, each with its own options (e.g. vote + 0.1 x format)',
    corl: '^0.1.0',
    readsGroundTruth: (options: WeightedOptions, q: ManifestQueryContext) =>
      options.sources.some((p) => q.readsGroundTruth(p.source)),
    trainedOnLabels: (options: WeightedOptions, q: ManifestQueryContext) =>
      options.sources.some((p) => q.trainedOnLabels(p.source)),
    tokenStats: (options: WeightedOptions, q: ManifestQueryContext) =>
      options.sources.some((p) => q.tokenStats(p.source)),
    options: WEIGHTED_OPTIONS_SCHEMA,
  },
  async create(options: WeightedOptions, ctx: PluginContext): Promise<RewardSource> {
    if (options.sources.every((p) => p.weight === 0)) {
      throw new CorlError(
        'CORL_ERR_REWARD_OPTIONS',
        'expected at least one non-zero weight in reward.options.sources, got only zeros',
        { where: 'reward.options.sources' },
      );
    }
    const parts: { source: RewardSource; weight: number; groundTruth: boolean }[] = [];
    try {
      for (const p of options.sources) {
        parts.push({
          source: await ctx.create('reward', p.source),
          weight: p.weight,
          groundTruth: ctx.readsGroundTruth(p.source),
        });
      }
    } catch (e) {
      for (const p of parts) await p.source.close?.();
      throw e;
    }
    const keyed = parts.find((p) => p.source.answerKeys);
    /** Every part's results for the contexts (in one call where a part scores many at once), then their sum. */
    const scoreAll = async (contexts: readonly RewardContext[], work?: WorkOptions): Promise<RewardResult[]> => {
      const byPart: RewardResult[][] = [];
      for (const p of parts) {
        const seen = contexts.map((rc) => {
          const { reference: _reference, ...rest } = rc;
          return p.groundTruth ? rc : rest;
        });
        if (p.source.scoreMany) byPart.push(await p.source.scoreMany(seen, work));
        else {
          const row: RewardResult[] = [];
          for (const rc of seen) row.push(await p.source.score(rc, work));
          byPart.push(row);
        }
      }
      return contexts.map((rc, c) =>
        combine(
          rc,
          byPart.map((row) => row[c]!),
        ),
      );
    };
    const combine = (rc: RewardContext, results: readonly RewardResult[]): RewardResult => {
      const rewards = new Array<number>(rc.completions.length).fill(0);
      const metrics: Record<string, number> = {};
      let label: string | null | undefined;
      let ownLabel: string | null | undefined;
      for (const [i, p] of parts.entries()) {
        // Each part is held to the contract the pipeline holds the whole to (core/reward/checks.ts).
        const r = checkResult(results[i], rewards.length, {
          use: options.sources[i]!.source.use,
          what: `problem "${rc.problem.id}" as part ${i} of corl:weighted`,
          where: `reward.options.sources[${i}]`,
        });
        r.rewards.forEach((x, k) => {
          rewards[k] = rewards[k]! + p.weight * x;
        });
        if (label === undefined && r.label !== undefined) {
          label = r.label;
          ownLabel = r.ownLabel;
        }
        metrics[`weighted/${i}/reward`] = mean(r.rewards, 0);
        for (const [k, v] of Object.entries(r.metrics ?? {})) metrics[`weighted/${i}/${k}`] = v;
      }
      return { rewards, ...(label !== undefined ? { label, ownLabel } : {}), metrics };
    };
    return {
      ...(keyed
        ? { answerKeys: (input: AnswerKeyInput, work?: WorkOptions) => keyed.source.answerKeys!(input, work) }
        : {}),
      ...(parts.some((p) => p.source.scoreMany) ? { scoreMany: scoreAll } : {}),
      async score(rc: RewardContext, work?: WorkOptions): Promise<RewardResult> {
        return (await scoreAll([rc], work))[0]!;
      },
      async close() {
        for (const p of parts) await p.source.close?.();
      },
    };
  },
});
