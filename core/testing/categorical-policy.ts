// A policy small enough to train in microseconds and exact enough to check by hand: for every prompt,
// a softmax over a fixed list of candidate answers. Sampling draws one "token" (the answer index);
// update() takes the real GRPO objective's gradient from core/grpo and applies it to the logits
// through ∂log p_i/∂z_j = (1[i=j] − p_j)/T. Plugin authors use it to run their reward, topology,
// diversity, extractor or task plugin through `corl train` in seconds.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Completion } from '../contracts/completion';
import type { JsonSchema } from '../contracts/plugin';
import type {
  Policy,
  PolicyDescription,
  SampleRequest,
  SamplingOptions,
  UpdateBatch,
  UpdateResult,
} from '../contracts/policy';
import { CorlError } from '../errors';
import { grpoLoss } from '../grpo/loss';
import { definePlugin } from '../registry/define';
import { writeJsonAtomic } from '../util/fs';
import { mixSeed, Rng } from '../util/rng';

/**
 * The options schema of `testing:categorical`. {@link CategoricalPolicyOptions} is written out (so
 * corl/testing's declarations need nothing beyond corl), and a compile-time check in
 * test/core/testing/categorical-policy.test.ts fails when it and `FromSchema` of this schema differ.
 */
export const CATEGORICAL_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    answers: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      minItems: 1,
      default: ['1', '2', '3', '4'],
      description: 'candidate answers (the whole vocabulary)',
    },
    format: {
      type: 'string',
      default: 'The answer is \\boxed{{answer}}.',
      description: 'completion text; {answer} is replaced by the sampled answer',
    },
    learningRate: {
      type: 'number',
      exclusiveMinimum: 0,
      default: 0.5,
      description: 'gradient-descent step on the logits',
    },
    initScale: {
      type: 'number',
      minimum: 0,
      default: 1,
      description: 'standard deviation of the seeded initial logits',
    },
    prefer: {
      type: 'object',
      additionalProperties: { type: 'string' },
      default: {},
      description: 'prompt -> answer whose initial logit is raised',
    },
    preferStrength: { type: 'number', default: 2, description: "how much a preferred answer's logit is raised" },
    family: { type: 'string', minLength: 1, default: 'categorical', description: 'model family label' },
  },
  additionalProperties: false,
} as const satisfies JsonSchema;

/** Options of `testing:categorical`. */
export interface CategoricalPolicyOptions {
  /** The candidate answers; the policy's whole vocabulary. */
  answers: string[];
  /** Completion text; `{answer}` is replaced by the sampled answer. */
  format: string;
  /** Step size of plain gradient descent on the logits. */
  learningRate: number;
  /** Standard deviation of the initial logits (seeded per agent and prompt). */
  initScale: number;
  /** Per prompt, an answer whose initial logit is raised by `preferStrength` (to make agents disagree on purpose). */
  prefer: Record<string, string>;
  /** How much `prefer` raises a logit. */
  preferStrength: number;
  /** Model family label reported by describe(). */
  family: string;
}

/** Softmax of logits / T (T = 0 is treated as T = 1, the greedy convention for log-probabilities). */
export function temperedSoftmax(logits: readonly number[], temperature: number): number[] {
  const t = temperature > 0 ? temperature : 1;
  const m = Math.max(...logits);
  const e = logits.map((l) => Math.exp((l - m) / t));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

/** Indices kept by nucleus sampling: the smallest set of most probable answers whose mass reaches topP. */
export function nucleus(p: readonly number[], topP: number): number[] {
  if (topP >= 1) return p.map((_, i) => i);
  const order = p.map((_, i) => i).sort((a, b) => p[b]! - p[a]! || a - b);
  const keep: number[] = [];
  let mass = 0;
  for (const i of order) {
    keep.push(i);
    mass += p[i]!;
    if (mass >= topP) break;
  }
  return keep.sort((a, b) => a - b);
}

/** The policy behind `testing:categorical`. */
export class CategoricalPolicy implements Policy {
  private readonly logits = new Map<string, number[]>();
  private updates = 0;

  /** Updates applied so far (a checkpoint restores the count). */
  get updatesApplied(): number {
    return this.updates;
  }

  constructor(
    private readonly options: CategoricalPolicyOptions,
    private readonly seed: number,
  ) {
    const index = new Set(options.answers);
    if (index.size !== options.answers.length) {
      throw new CorlError(
        'CORL_ERR_PLUGIN_OPTIONS',
        `expected distinct answers, got ${JSON.stringify(options.answers)}`,
        { where: 'options.answers' },
      );
    }
    for (const [prompt, answer] of Object.entries(options.prefer)) {
      if (!index.has(answer)) {
        throw new CorlError(
          'CORL_ERR_PLUGIN_OPTIONS',
          `expected prefer[${JSON.stringify(prompt)}] to be one of the answers ${JSON.stringify(options.answers)}, got ${JSON.stringify(answer)}`,
          { where: 'options.prefer' },
        );
      }
    }
  }

  describe(): PolicyDescription {
    return {
      kind: 'testing:categorical',
      family: this.options.family,
      parameters: this.logits.size * this.options.answers.length,
      canTrain: true,
      details: { answers: this.options.answers.length },
    };
  }

  /** The initial logits of a prompt: a pure function of the seed and the prompt (also the KL reference). */
  initialLogits(prompt: string): number[] {
    const rng = new Rng(mixSeed(this.seed, 'categorical', prompt));
    const l = this.options.answers.map(() => rng.normal() * this.options.initScale);
    const preferred = this.options.prefer[prompt];
    if (preferred !== undefined) l[this.options.answers.indexOf(preferred)]! += this.options.preferStrength;
    return l;
  }

  /** Current logits of a prompt (created on first use). */
  logitsOf(prompt: string): number[] {
    let l = this.logits.get(prompt);
    if (!l) {
      l = this.initialLogits(prompt);
      this.logits.set(prompt, l);
    }
    return l;
  }

  async sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]> {
    return requests.map((req, r) => {
      const temperature = req.overrides?.temperature ?? options.temperature;
      const topP = req.overrides?.topP ?? options.topP;
      const rng = new Rng(mixSeed(req.overrides?.seed ?? options.seed, r));
      const p = temperedSoftmax(this.logitsOf(req.prompt), temperature);
      const keep = nucleus(p, topP);
      const mass = keep.reduce((a, i) => a + p[i]!, 0);
      const stats = options.tokenStats ? this.tokenStats(p) : undefined;
      return Array.from({ length: options.n }, (): Completion => {
        let idx = keep[keep.length - 1]!;
        if (temperature === 0) {
          idx = p.indexOf(Math.max(...p));
        } else {
          const u = rng.next() * mass;
          let acc = 0;
          for (const i of keep) {
            acc += p[i]!;
            if (u < acc) {
              idx = i;
              break;
            }
          }
        }
        return {
          text: this.options.format.split('{answer}').join(this.options.answers[idx]!),
          tokenIds: [idx],
          logprobs: [Math.log(p[idx]!)],
          finishReason: 'stop',
          ...(stats ? { entropies: [stats.entropy], meanLogprobs: [stats.meanLogprob] } : {}),
        };
      });
    });
  }

  private tokenStats(p: readonly number[]): { entropy: number; meanLogprob: number } {
    let entropy = 0;
    let sumLog = 0;
    for (const q of p) {
      const lq = Math.log(Math.max(q, 1e-300));
      entropy -= q > 0 ? q * lq : 0;
      sumLog += lq;
    }
    return { entropy, meanLogprob: sumLog / p.length };
  }

  async update(batch: UpdateBatch): Promise<UpdateResult> {
    const T = batch.temperature > 0 ? batch.temperature : 1;
    const usable = batch.samples.filter((s) => s.completion.tokenIds.length === 1);
    const probs = usable.map((s) => temperedSoftmax(this.logitsOf(s.prompt), T));
    const refProbs =
      batch.loss.beta > 0 ? usable.map((s) => temperedSoftmax(this.initialLogits(s.prompt), T)) : undefined;
    const idx = usable.map((s) => s.completion.tokenIds[0]!);
    for (const [i, k] of idx.entries()) {
      if (!Number.isInteger(k) || k < 0 || k >= this.options.answers.length) {
        throw new CorlError(
          'CORL_ERR_POLICY_OUTPUT',
          `expected token ids in [0, ${this.options.answers.length}), got ${k}`,
          { where: `update sample ${i}` },
        );
      }
    }
    const loss = grpoLoss(
      {
        logprobs: usable.map((_, i) => [Math.log(probs[i]![idx[i]!]!)]),
        oldLogprobs: usable.map((s) => [s.completion.logprobs[0]!]),
        refLogprobs: refProbs?.map((p, i) => [Math.log(p[idx[i]!]!)]),
        advantages: usable.map((s) => s.advantage),
      },
      { ...batch.loss, maxCompletionLength: batch.loss.maxCompletionLength },
    );
    // Gradients for the whole batch before any change (one optimizer step).
    const grads = new Map<string, number[]>();
    usable.forEach((s, i) => {
      const g =
        grads.get(s.prompt) ??
        grads
          .set(
            s.prompt,
            this.options.answers.map(() => 0),
          )
          .get(s.prompt)!;
      const dl = loss.gradLogprobs[i]![0]!;
      const p = probs[i]!;
      for (let j = 0; j < p.length; j++) g[j]! += (dl * ((j === idx[i] ? 1 : 0) - p[j]!)) / T;
    });
    let norm2 = 0;
    for (const [prompt, g] of grads) {
      const l = this.logitsOf(prompt);
      g.forEach((v, j) => {
        l[j]! -= this.options.learningRate * v;
        norm2 += v * v;
      });
    }
    this.updates++;
    return {
      metrics: {
        'loss/total': loss.loss,
        'loss/policy': loss.policyLoss,
        'loss/kl': loss.kl,
        'loss/clip_fraction': loss.clipFraction,
        'optim/grad_norm': Math.sqrt(norm2),
        'optim/lr': this.options.learningRate,
      },
    };
  }

  async save(dir: string): Promise<void> {
    await writeJsonAtomic(path.join(dir, 'categorical.json'), {
      format: 'corl-testing-categorical',
      version: 1,
      answers: this.options.answers,
      updates: this.updates,
      logits: [...this.logits.entries()],
    });
  }

  async load(dir: string): Promise<void> {
    const file = path.join(dir, 'categorical.json');
    let data: { format?: unknown; answers?: unknown; updates?: unknown; logits?: unknown };
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a readable categorical checkpoint, got ${(e as Error).message}`,
        { where: file },
      );
    }
    if (
      data.format !== 'corl-testing-categorical' ||
      JSON.stringify(data.answers) !== JSON.stringify(this.options.answers)
    ) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        `expected a categorical checkpoint over ${JSON.stringify(this.options.answers)}, got ${JSON.stringify(data.answers)}`,
        { where: file },
      );
    }
    const entries = data.logits as [string, number[]][];
    if (
      !Array.isArray(entries) ||
      !entries.every(
        (e) =>
          Array.isArray(e) &&
          typeof e[0] === 'string' &&
          Array.isArray(e[1]) &&
          e[1].length === this.options.answers.length &&
          e[1].every(Number.isFinite),
      )
    ) {
      throw new CorlError(
        'CORL_ERR_POLICY_CHECKPOINT',
        'expected [prompt, logits] entries with one finite logit per answer, got something else',
        { where: file },
      );
    }
    this.logits.clear();
    for (const [k, v] of entries) this.logits.set(k, [...v]);
    this.updates = Number(data.updates) || 0;
  }
}

/**
 * `testing:categorical`: a per-prompt softmax over candidate answers, trained with the GRPO
 * objective of core/grpo. Registered by `register` from `corl/testing`, so a config can list
 * `"plugins": ["corl/testing"]` and train against it in seconds.
 */
export const categoricalPolicy = definePlugin({
  manifest: {
    name: 'testing:categorical',
    kind: 'policy',
    description:
      'Test policy: per prompt, a softmax over candidate answers trained with the GRPO objective (seconds per run)',
    corl: '^0.1.0',
    options: CATEGORICAL_OPTIONS_SCHEMA,
  },
  create: (options: CategoricalPolicyOptions, ctx) => new CategoricalPolicy(options, ctx.seed),
});
