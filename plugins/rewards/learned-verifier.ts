import * as path from 'node:path';
import { pathKeyword, resolveConfigPath } from '../../core/util/paths';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RewardResult, RewardSource } from '../../core/contracts/reward-source';
import { CorlError } from '../../core/errors';
import { definePlugin } from '../../core/registry/define';
import { FairGate } from '../../core/util/fair-queue';
import { CheckpointScorer } from '../policies/transformer/scorer';
import { END } from '../policies/transformer/tokenizer';
import { NotARegularFile, readUserText } from '../../core/util/files';
import { mean } from '../../core/util/mean';

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
      ...pathKeyword('dir'),
      description:
        'folder of the verifier, relative to the config file or a package reference ("package:corl/models/verifiers/arith-slips"): verifier.json (a likelihood head over the checkpoint it names) or a corl:transformer checkpoint with a verdict head, e.g. "../models/verifiers/arith-slips"',
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

/** The head file in a verifier folder; without it the folder is a verdict-head checkpoint. */
export const VERIFIER_FILE = 'verifier.json';

/** A likelihood head: a logistic probe on the language model's token log-probabilities of the solution. */
export interface LikelihoodHead {
  readonly format: 'corl-learned-verifier';
  readonly version: 1;
  readonly head: 'likelihood';
  /** The corl:transformer checkpoint whose log-probabilities are read, relative to the verifier folder. */
  readonly model: string;
  /** Weights of [min, mean] token log-probability, and the bias: P(right) = σ(w·f + b). */
  readonly weights: readonly [number, number];
  readonly bias: number;
  /** How the probe was fitted (informational). */
  readonly fit?: Readonly<Record<string, unknown>>;
}

/**
 * The ids a likelihood head reads: the end token, the problem, the solution and the end token that
 * should close it, with the index of the first target (the solution's first token). A solution
 * longer than the context loses its front.
 */
export function likelihoodIds(
  scorer: CheckpointScorer,
  problem: string,
  solution: string,
  where: string,
): { ids: number[]; from: number } {
  const head = scorer.encode(problem);
  const body = scorer.tokenizer.encode(solution);
  const room = scorer.architecture.context - head.length - 1;
  if (room < 0) {
    throw new CorlError(
      'CORL_ERR_REWARD_VERIFIER',
      `expected the problem to fit the verifier's context of ${scorer.architecture.context} tokens with one more, got ${head.length}`,
      { where, hint: "use a language model with a larger context, or shorten the task's prompts" },
    );
  }
  return { ids: [...head, ...body.slice(Math.max(0, body.length - room)), END], from: head.length };
}

/** [min, mean] of a solution's token log-probabilities (its closing end token included, so never empty). */
export function likelihoodFeatures(logprobs: readonly number[]): [number, number] {
  return [Math.min(...logprobs), mean(logprobs, NaN)];
}

/** σ(w·f + b), computed without overflow. */
export function likelihoodScore(head: Pick<LikelihoodHead, 'weights' | 'bias'>, f: readonly [number, number]): number {
  return verdictProbability(head.weights[0] * f[0] + head.weights[1] * f[1] + head.bias, 0);
}

/** Read and check `verifier.json` in `dir`; undefined when there is none. */
export async function readVerifierHead(dir: string, where: string): Promise<LikelihoodHead | undefined> {
  const file = path.join(dir, VERIFIER_FILE);
  let text: string;
  try {
    // Opened without blocking: a FIFO or a device is refused, never waited on.
    text = readUserText(file);
  } catch (e) {
    if (e instanceof NotARegularFile)
      throw new CorlError('CORL_ERR_REWARD_VERIFIER', `expected a regular file ${file}, got ${e.message}`, { where });
    return undefined;
  }
  let h: Partial<LikelihoodHead> | null;
  try {
    h = JSON.parse(text) as Partial<LikelihoodHead> | null;
  } catch (e) {
    throw new CorlError('CORL_ERR_REWARD_VERIFIER', `expected JSON in ${file}, got ${(e as Error).message}`, { where });
  }
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (
    h?.format !== 'corl-learned-verifier' ||
    h.version !== 1 ||
    h.head !== 'likelihood' ||
    typeof h.model !== 'string' ||
    !Array.isArray(h.weights) ||
    h.weights.length !== 2 ||
    !h.weights.every(finite) ||
    !finite(h.bias)
  ) {
    throw new CorlError(
      'CORL_ERR_REWARD_VERIFIER',
      `expected ${VERIFIER_FILE} {"format": "corl-learned-verifier", "version": 1, "head": "likelihood", "model", "weights": [2 numbers], "bias"}, got ${text.slice(0, 120)}`,
      { where: file, hint: 'write it with `node dist/scripts/verifier.js fit` (models/README.md, "Verifiers")' },
    );
  }
  return h as LikelihoodHead;
}

async function openScorer(dir: string, threads: number, where: string): Promise<CheckpointScorer> {
  try {
    return await CheckpointScorer.open(dir, threads);
  } catch (e) {
    throw new CorlError(
      'CORL_ERR_REWARD_VERIFIER',
      `expected a verifier checkpoint at ${dir}, got ${(e as Error).message}`,
      {
        where,
        cause: e,
        hint: 'make one as models/README.md ("Verifiers") says, or fix the path (relative to the config file)',
      },
    );
  }
}

/** Scores of a group of completions under a likelihood head. */
async function likelihoodScores(
  scorer: CheckpointScorer,
  head: LikelihoodHead,
  problem: string,
  texts: readonly string[],
  where: string,
): Promise<number[]> {
  const rows = texts.map((t) => likelihoodIds(scorer, problem, t, where));
  const lps = await scorer.tokenLogprobs(
    rows.map((r) => r.ids),
    rows.map((r) => r.from),
  );
  return lps.map((l) => likelihoodScore(head, likelihoodFeatures(l)));
}

/** Scores of a group of completions under a verdict head: P(Y) among the two verdicts. */
async function verdictScores(
  scorer: CheckpointScorer,
  problem: string,
  texts: readonly string[],
  where: string,
): Promise<number[]> {
  const [yes, no] = [VERDICT_RIGHT, VERDICT_WRONG].map((v) => scorer.tokenizer.encode(v)[0]!);
  const logits = await scorer.nextLogits(texts.map((t) => verifierIds(scorer, problem, t, where)));
  return logits.map((l) => verdictProbability(l[yes!]!, l[no!]!));
}

async function checkVerdictTokens(scorer: CheckpointScorer, where: string): Promise<void> {
  const [right, wrong] = [VERDICT_RIGHT, VERDICT_WRONG].map((v) => scorer.tokenizer.encode(v));
  if (right!.length !== 1 || wrong!.length !== 1 || right![0]! <= 1 || wrong![0]! <= 1) {
    await scorer.close();
    throw new CorlError(
      'CORL_ERR_REWARD_VERIFIER',
      `expected the verifier's tokenizer to have one token each for the verdicts "${VERDICT_RIGHT}" and "${VERDICT_WRONG}", got ids ${JSON.stringify(right)} and ${JSON.stringify(wrong)}`,
      { where, hint: 'train the verifier with a tokenizer whose alphabet holds both letters' },
    );
  }
}

/**
 * MAPoRL's learned verifier on the embedded model, from the problem text and the completion alone.
 * The folder's `verifier.json` names its head: a logistic probe fitted on labelled solutions over a
 * language model's teacher-forced token log-probabilities of the solution (`likelihood`); without
 * the file the folder is a corl:transformer checkpoint trained (with `corl pretrain` on a labelled
 * corpus) to follow problem, solution and cue with Y or N, scored by P(Y) among the two verdicts.
 * No labels at run time, but labels made it: the manifest declares `trainedOnLabels`
 * (docs/algorithms/maporl.md, "The verifier").
 */
export const learnedVerifierReward = definePlugin({
  manifest: {
    name: 'corl:learned-verifier',
    kind: 'reward',
    description:
      "Learned verifier of a debate's turns: P(right) of each completion from a model fitted on labelled solutions (a likelihood probe or a verdict head over a corl:transformer checkpoint); trained on labels, reads none",
    corl: '^0.1.0',
    readsGroundTruth: false,
    trainedOnLabels: true,
    pointwise: true,
    options: LEARNED_VERIFIER_OPTIONS_SCHEMA,
  },
  async create(options: LearnedVerifierOptions, ctx): Promise<RewardSource> {
    const where = 'reward.options.checkpoint';
    const dir = resolveConfigPath(options.checkpoint, ctx.baseDir);
    const head = await readVerifierHead(dir, where);
    const scorer = await openScorer(head ? path.resolve(dir, head.model) : dir, options.threads, where);
    if (!head) await checkVerdictTokens(scorer, where);
    // One forward pass at a time (each already uses `threads`), taken lane by lane: under
    // `corl serve` one client's backlog never holds another's, and work nobody waits for leaves.
    const gate = new FairGate(1);
    return {
      async score(rc, work): Promise<RewardResult> {
        const texts = rc.completions.map((c) => c.text);
        const rewards = await gate.run(work?.lane ?? '', work?.signal, () => {
          work?.signal?.throwIfAborted();
          return head
            ? likelihoodScores(scorer, head, rc.problem.prompt, texts, where)
            : verdictScores(scorer, rc.problem.prompt, texts, where);
        });
        work?.signal?.throwIfAborted();
        return { rewards, metrics: { 'verifier/score_mean': mean(rewards, 0) } };
      },
      close: () => scorer.close(),
    };
  },
});
