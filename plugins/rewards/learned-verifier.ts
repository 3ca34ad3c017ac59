import * as path from 'node:path';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { CheckpointScorer } from '../policies/transformer/scorer';

/** What follows the problem and the solution in a verifier's text; the verdict token comes next. */
export const VERDICT_CUE = ' Verdict:';
/** The verdict token of a right solution. */
export const VERDICT_RIGHT = 'Y';
/** The verdict token of a wrong solution. */
export const VERDICT_WRONG = 'N';

/** The text a learned verifier reads for one solution: the problem, the solution, the cue. */
export function verifierText(problem: string, solution: string): string {
  return `${problem}${solution}${VERDICT_CUE}`;
}

/** σ(ℓ_right − ℓ_wrong): the probability of the right verdict among the two verdict tokens. */
export function verdictProbability(logitRight: number, logitWrong: number): number {
  const d = logitRight - logitWrong;
  return d >= 0 ? 1 / (1 + Math.exp(-d)) : Math.exp(d) / (1 + Math.exp(d));
}

/** The options schema of this plugin. */
const LEARNED_VERIFIER_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['checkpoint'],
  properties: {
    checkpoint: {
      type: 'string',
      minLength: 1,
      description:
        'folder of the verifier: a corl:transformer checkpoint trained on labelled verdicts (relative to the config file), e.g. "../models/verifiers/arith-slips"',
    },
    threads: { type: 'integer', minimum: 1, maximum: 64, default: 1, description: 'onnxruntime threads' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** Options of `corl:learned-verifier`, derived from its schema. */
export type LearnedVerifierOptions = FromSchema<typeof LEARNED_VERIFIER_OPTIONS_SCHEMA>;

/** Token ids of `text` for `scorer`, cut to its context: the solution loses its front first. */
function verifierIds(scorer: CheckpointScorer, problem: string, solution: string, where: string): number[] {
  const whole = scorer.encode(verifierText(problem, solution));
  const C = scorer.architecture.context;
  if (whole.length <= C) return whole;
  const head = scorer.encode(problem);
  const cue = scorer.tokenizer.encode(VERDICT_CUE);
  const room = C - head.length - cue.length;
  if (room < 0) {
    throw new CorlError(
      'CORL_ERR_REWARD_VERIFIER',
      `expected the problem and the verdict cue to fit the verifier's context of ${C} tokens, got ${head.length + cue.length}`,
      { where, hint: 'train the verifier with a larger "context", or shorten the task\'s prompts' },
    );
  }
  const body = scorer.tokenizer.encode(solution);
  return [...head, ...body.slice(body.length - room), ...cue];
}

/**
 * MAPoRL's learned verifier on the embedded model: a corl:transformer checkpoint trained (with
 * `corl pretrain` on a labelled corpus) to follow a problem, a solution and a cue with the verdict
 * Y or N. A completion's score is the probability of Y among the two verdicts, read teacher-forced
 * from the problem text and the completion alone: no labels at run time, but labels made the
 * verifier, so the manifest declares `trainedOnLabels` (docs/algorithms/maporl.md, "The verifier").
 */
export const learnedVerifierReward = definePlugin({
  manifest: {
    name: 'corl:learned-verifier',
    kind: 'reward',
    description:
      "Learned verifier of a debate's turns: a corl:transformer checkpoint's probability of the right verdict after the problem and the solution (trained on labels; reads none)",
    corl: '^0.1.0',
    usesGroundTruth: false,
    trainedOnLabels: true,
    pointwise: true,
    options: LEARNED_VERIFIER_OPTIONS_SCHEMA,
  },
  async create(options: LearnedVerifierOptions, ctx): Promise<RewardSource> {
    const where = 'reward.options.checkpoint';
    const dir = path.resolve(ctx.baseDir, options.checkpoint);
    let scorer: CheckpointScorer;
    try {
      scorer = await CheckpointScorer.open(dir, options.threads);
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_REWARD_VERIFIER',
        `expected a verifier checkpoint at ${dir}, got ${(e as Error).message}`,
        {
          where,
          cause: e,
          hint: 'train one with `npx corl pretrain` on a labelled corpus (models/README.md, "Verifiers"), or fix the path (relative to the config file)',
        },
      );
    }
    const [right, wrong] = [VERDICT_RIGHT, VERDICT_WRONG].map((v) => scorer.tokenizer.encode(v));
    if (right!.length !== 1 || wrong!.length !== 1 || right![0]! <= 1 || wrong![0]! <= 1) {
      await scorer.close();
      throw new CorlError(
        'CORL_ERR_REWARD_VERIFIER',
        `expected the verifier's tokenizer to have one token each for the verdicts "${VERDICT_RIGHT}" and "${VERDICT_WRONG}", got ids ${JSON.stringify(right)} and ${JSON.stringify(wrong)}`,
        { where, hint: 'train the verifier with a tokenizer whose alphabet holds both letters' },
      );
    }
    const [yes, no] = [right![0]!, wrong![0]!];
    return {
      async score(rc): Promise<RewardResult> {
        const rows = rc.completions.map((c) => verifierIds(scorer, rc.problem.prompt, c.text, where));
        const logits = await scorer.nextLogits(rows);
        const rewards = logits.map((l) => verdictProbability(l[yes]!, l[no]!));
        const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(rewards.length, 1);
        return { rewards, metrics: { 'verifier/score_mean': mean } };
      },
      close: () => scorer.close(),
    };
  },
});
