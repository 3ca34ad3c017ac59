import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { CompletionView, RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { lastAnswerTag, lastBoxed } from '../answers/extract';

/** Whether a completion has the required format. */
export function hasFormat(c: CompletionView, check: FormatOptions['check'], re?: RegExp): boolean {
  switch (check) {
    case 'boxed':
      return lastBoxed(c.text) !== null;
    case 'answer-tag':
      return lastAnswerTag(c.text) !== null;
    case 'answer':
      return c.answer !== null && c.key !== null;
    case 'pattern':
      return re!.test(c.text);
  }
}

const FORMAT_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    check: {
      enum: ['boxed', 'answer-tag', 'answer', 'pattern'],
      default: 'boxed',
      description:
        "boxed: a balanced \\boxed{}; answer-tag: an <answer>...</answer>; answer: the run's extractor found an answer; pattern: the regular expression matches",
    },
    pattern: {
      type: 'string',
      default: '',
      description: 'regular expression for check "pattern" (JavaScript syntax; keep it free of nested quantifiers)',
    },
    flags: { type: 'string', pattern: '^[imsu]*$', default: '', description: 'flags of the pattern' },
    reward: { type: 'number', default: 1, description: 'reward when the format is present' },
    penalty: { type: 'number', default: 0, description: 'reward when it is absent' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
type FormatOptions = FromSchema<typeof FORMAT_OPTIONS_SCHEMA>;

/** A format reward: `reward` when the completion has the format, `penalty` otherwise (label-free). */
export const formatReward = definePlugin({
  manifest: {
    name: 'corl:format',
    kind: 'reward',
    description:
      'Format reward: 1 when the completion has a balanced \\boxed{} (or an <answer> tag, any extracted answer, a regular expression), else 0',
    corl: '^0.1.0',
    readsGroundTruth: false,
    options: FORMAT_OPTIONS_SCHEMA,
  },
  create(options: FormatOptions): RewardSource {
    let re: RegExp | undefined;
    if (options.check === 'pattern') {
      if (!options.pattern)
        throw new CorlError(
          'CORL_ERR_REWARD_OPTIONS',
          'expected reward.options.pattern for check "pattern", got an empty string',
          { where: 'reward.options.pattern' },
        );
      try {
        re = new RegExp(options.pattern, options.flags);
      } catch (e) {
        throw new CorlError(
          'CORL_ERR_REWARD_OPTIONS',
          `expected a valid regular expression, got ${JSON.stringify(options.pattern)} (${(e as Error).message})`,
          { where: 'reward.options.pattern' },
        );
      }
    }
    return {
      async score(ctx): Promise<RewardResult> {
        const ok = ctx.completions.map((c) => hasFormat(c, options.check, re));
        return {
          rewards: ok.map((x) => (x ? options.reward : options.penalty)),
          metrics: { 'format/fraction': ok.filter(Boolean).length / Math.max(1, ok.length) },
        };
      },
    };
  },
});
