import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import {
  CorlError, definePlugin, grpo, mixSeed, Rng, writeJsonAtomic,
  type Completion, type Policy, type PolicyDescription, type SampleRequest, type SamplingOptions, type UpdateBatch, type UpdateResult,
} from 'corl';

/** Options of the policy: a JSON Schema, which corl validates and defaults a config's options against before `create` runs. */
const BIGRAM_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    alphabet: { type: 'string', minLength: 1, default: '0123456789 ', description: 'characters it can write (one token each, plus an end token)' },
    learningRate: { type: 'number', exclusiveMinimum: 0, default: 0.5, description: 'gradient-descent step on the logits' },
    initScale: { type: 'number', minimum: 0, default: 0.5, description: 'standard deviation of the seeded initial logits' },
    family: { type: 'string', minLength: 1, default: 'bigram', description: 'model family label' },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options type, derived from the schema (json-schema-to-ts), so the two cannot drift. */
export type BigramOptions = FromSchema<typeof BIGRAM_OPTIONS_SCHEMA>;

/** Softmax of logits / T; T = 0 (greedy) is read at T = 1, the convention for greedy log-probabilities. */
export function softmax(logits: ArrayLike<number>, temperature: number): number[] {
  const t = temperature > 0 ? temperature : 1;
  let m = -Infinity;
  for (let i = 0; i < logits.length; i++) m = Math.max(m, logits[i]!);
  const e = Array.from({ length: logits.length }, (_, i) => Math.exp((logits[i]! - m) / t));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

/**
 * A character bigram language model: the next token's logits depend on the previous token only
 * (the first token on the prompt's last character). Small enough to train on a laptop in
 * milliseconds, and a complete Policy: seeded batched sampling with temperature, top-p, stop strings
 * and an end token; per-token entropy and mean log-probability on request; GRPO updates through
 * corl's own loss (`grpo.grpoLoss`, the same objective the trainer documents); exact checkpoints.
 *
 * Log-probabilities are those of the tempered distribution softmax(z / T) at the sampling
 * temperature; `update` recomputes them at `batch.temperature`, so the ratio ρ starts at 1.
 */
export class BigramPolicy implements Policy {
  /** logits[s * V + v]: state s (previous token, or START), next token v. */
  private readonly logits: Float64Array;
  private readonly initial: Float64Array;
  private readonly V: number;
  private readonly START: number;
  private readonly index = new Map<string, number>();
  private updates = 0;

  constructor(private readonly options: BigramOptions, seed: number) {
    const chars = [...options.alphabet];
    if (new Set(chars).size !== chars.length) {
      throw new CorlError('CORL_ERR_PLUGIN_OPTIONS', `expected an alphabet without repeated characters, got ${JSON.stringify(options.alphabet)}`, { where: 'options.alphabet' });
    }
    chars.forEach((c, i) => this.index.set(c, i));
    this.V = chars.length + 1; // + end of text
    this.START = chars.length; // the state before the first token (the end token never precedes one)
    const rng = new Rng(mixSeed(seed, 'bigram'));
    this.logits = Float64Array.from({ length: (this.START + 1) * this.V }, () => rng.normal() * options.initScale);
    this.initial = Float64Array.from(this.logits);
  }

  /** A copy of the next-token logits after `context` (its last character decides; START when none fits). */
  logitsAfter(context: string): number[] {
    return Array.from(this.row(this.logits, this.stateOf(context)));
  }

  describe(): PolicyDescription {
    return { kind: 'example:policy', family: this.options.family, parameters: this.logits.length, canTrain: true, details: { vocabulary: this.V } };
  }

  /** The state a prompt leaves the model in: its last character if the alphabet has it, else START. */
  private stateOf(prompt: string): number {
    const last = [...prompt].pop();
    return last !== undefined && this.index.has(last) ? this.index.get(last)! : this.START;
  }

  private row(table: Float64Array, state: number): Float64Array {
    return table.subarray(state * this.V, (state + 1) * this.V);
  }

  async sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]> {
    const chars = [...this.options.alphabet];
    return requests.map((req, r) => {
      const o = { ...options, ...req.overrides };
      const rng = new Rng(mixSeed(o.seed, r));
      return Array.from({ length: options.n }, (): Completion => {
        let state = this.stateOf(req.prompt);
        let text = '';
        const tokenIds: number[] = [];
        const logprobs: number[] = [];
        const entropies: number[] = [];
        const meanLogprobs: number[] = [];
        let finishReason: Completion['finishReason'] = 'length';
        while (tokenIds.length < o.maxTokens) {
          const p = softmax(this.row(this.logits, state), o.temperature);
          const token = o.temperature === 0 ? p.indexOf(Math.max(...p)) : draw(p, o.topP, rng);
          tokenIds.push(token);
          logprobs.push(Math.log(p[token]!));
          if (o.tokenStats) {
            entropies.push(-p.reduce((a, q) => a + (q > 0 ? q * Math.log(q) : 0), 0));
            meanLogprobs.push(p.reduce((a, q) => a + Math.log(Math.max(q, 1e-300)), 0) / p.length);
          }
          if (token === this.START) { finishReason = 'stop'; break; }
          text += chars[token];
          const stop = (o.stop ?? []).find((s) => text.endsWith(s));
          if (stop !== undefined) { text = text.slice(0, -stop.length); finishReason = 'stop'; break; }
          state = token;
        }
        return { text, tokenIds, logprobs, finishReason, ...(o.tokenStats ? { entropies, meanLogprobs } : {}) };
      });
    });
  }

  async update(batch: UpdateBatch): Promise<UpdateResult> {
    const T = batch.temperature > 0 ? batch.temperature : 1;
    // Per token: its state and probabilities now, under the reference (β > 0), and log π_θ.
    const steps = batch.samples.map((s) => {
      let state = this.stateOf(s.prompt);
      return s.completion.tokenIds.map((token) => {
        if (!Number.isInteger(token) || token < 0 || token >= this.V) {
          throw new CorlError('CORL_ERR_POLICY_OUTPUT', `expected token ids in [0, ${this.V}), got ${token}`, { where: 'update' });
        }
        const p = softmax(this.row(this.logits, state), T);
        const ref = batch.loss.beta > 0 ? softmax(this.row(this.initial, state), T) : undefined;
        const step = { state, token, p, logp: Math.log(p[token]!), refLogp: ref ? Math.log(ref[token]!) : undefined };
        state = token;
        return step;
      });
    });
    const loss = grpo.grpoLoss({
      logprobs: steps.map((seq) => seq.map((t) => t.logp)),
      oldLogprobs: batch.samples.map((s) => s.completion.logprobs),
      refLogprobs: batch.loss.beta > 0 ? steps.map((seq) => seq.map((t) => t.refLogp!)) : undefined,
      advantages: batch.samples.map((s) => s.advantage),
    }, batch.loss);
    // Chain rule through the softmax: ∂ log p_token / ∂ z_v = (1[v = token] − p_v) / T.
    const grad = new Float64Array(this.logits.length);
    steps.forEach((seq, i) => seq.forEach((t, k) => {
      const g = loss.gradLogprobs[i]![k]!;
      for (let v = 0; v < this.V; v++) grad[t.state * this.V + v]! += g * ((v === t.token ? 1 : 0) - t.p[v]!) / T;
    }));
    let norm2 = 0;
    for (let j = 0; j < grad.length; j++) {
      norm2 += grad[j]! * grad[j]!;
      this.logits[j]! -= this.options.learningRate * grad[j]!;
    }
    this.updates++;
    return {
      metrics: {
        'loss/policy': loss.policyLoss,
        'loss/kl': loss.kl,
        'loss/clip_fraction': loss.clipFraction,
        'optim/grad_norm': Math.sqrt(norm2),
        'optim/lr': this.options.learningRate,
      },
    };
  }

  async save(dir: string): Promise<void> {
    await writeJsonAtomic(path.join(dir, 'bigram.json'), {
      format: 'example-bigram', version: 1, alphabet: this.options.alphabet, updates: this.updates,
      logits: Array.from(this.logits), initial: Array.from(this.initial),
    });
  }

  async load(dir: string): Promise<void> {
    const file = path.join(dir, 'bigram.json');
    let data: { format?: unknown; alphabet?: unknown; updates?: unknown; logits?: unknown; initial?: unknown };
    try {
      data = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new CorlError('CORL_ERR_POLICY_CHECKPOINT', `expected a readable bigram checkpoint, got ${(e as Error).message}`, { where: file });
    }
    const ok = (a: unknown): a is number[] => Array.isArray(a) && a.length === this.logits.length && a.every(Number.isFinite);
    if (data.format !== 'example-bigram' || data.alphabet !== this.options.alphabet || !ok(data.logits) || !ok(data.initial)) {
      throw new CorlError('CORL_ERR_POLICY_CHECKPOINT', `expected a bigram checkpoint over the alphabet ${JSON.stringify(this.options.alphabet)} with ${this.logits.length} finite logits, got something else`, { where: file });
    }
    this.logits.set(data.logits);
    this.initial.set(data.initial);
    this.updates = Number(data.updates) || 0;
  }
}

/** Draw from p restricted to its nucleus (the most probable tokens whose mass reaches topP). */
function draw(p: readonly number[], topP: number, rng: Rng): number {
  let keep = p.map((_, i) => i);
  if (topP < 1) {
    keep.sort((a, b) => p[b]! - p[a]! || a - b);
    let mass = 0;
    const n = keep.findIndex((i) => (mass += p[i]!) >= topP);
    keep = keep.slice(0, n < 0 ? keep.length : n + 1);
  }
  const total = keep.reduce((a, i) => a + p[i]!, 0);
  let u = rng.next() * total;
  for (const i of keep) {
    u -= p[i]!;
    if (u < 0) return i;
  }
  return keep[keep.length - 1]!;
}

export const examplePolicy = definePlugin({
  manifest: {
    name: 'example:policy',
    kind: 'policy',
    description: 'A character bigram language model trained with the GRPO objective (a minimal trainable policy)',
    corl: '^0.1.0',
    options: BIGRAM_OPTIONS_SCHEMA,
  },
  create: (options: BigramOptions, ctx) => new BigramPolicy(options, ctx.seed),
});
