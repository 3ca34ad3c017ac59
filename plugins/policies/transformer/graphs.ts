// The transformer's compute graphs, generated from its architecture: the forward pass (shared by
// every graph), the fused training step (forward + loss + backward + clipping + AdamW), the
// forward-only log-probability graph, the sampling graphs (prefill and one KV-cached decoding
// step) and the portable inference model written into checkpoints.
import type { Graph, Tensor } from '../../../core/tensor';
import { gradients } from '../../../core/tensor/autodiff';
import { Graph as G } from '../../../core/tensor/graph';
import { adamwInputs, adamwUpdate, clipByGlobalNorm, type AdamWOptions } from '../../../core/tensor/optim';
import { sinusoidalTable, type Architecture, type ParamSpec } from './architecture';
import { crossEntropy, grpoObjective, tokenLogprobs } from './loss';

/** Parameter tensors by name. */
export type Params = Readonly<Record<string, Tensor>>;

/** Declare every parameter as a graph input (named as the parameter, with an optional prefix). */
export function declareParams(g: Graph, specs: readonly ParamSpec[], prefix = ''): Tensor[] {
  return specs.map((s) => g.input(prefix + s.name, 'float32', s.shape));
}

const byName = (specs: readonly ParamSpec[], ts: readonly Tensor[]): Params =>
  Object.fromEntries(specs.map((s, i) => [s.name, ts[i]!]));

const NEG = -1e9;

function norm(g: Graph, a: Architecture, P: Params, prefix: string, x: Tensor): Tensor {
  if (a.norm === 'layernorm') return g.layerNorm(x, P[`${prefix}.g`]!, P[`${prefix}.b`]!, a.normEps)[0]!;
  // RMSNorm: x / √(mean(x²) + ε) · γ
  const ms = g.reduceMean(g.mul(x, x), [-1], true);
  return g.mul(g.mul(x, g.reciprocal(g.sqrt(g.shift(ms, a.normEps)))), P[`${prefix}.g`]!);
}

function linear(g: Graph, a: Architecture, P: Params, prefix: string, x: Tensor): Tensor {
  const y = g.matmul(x, P[`${prefix}.w`]!);
  return a.bias ? g.add(y, P[`${prefix}.b`]!) : y;
}

/** Attention of one layer given the projections q, k, v [B, T, d]; returns [B, T, d] (before the output projection). */
export type Attend = (layer: number, q: Tensor, k: Tensor, v: Tensor) => Tensor;

/**
 * Token + position embedding, the pre-norm blocks and the final norm. `ids` [B, T], `positions`
 * int32 broadcastable to [B, T] ([T] or [B, 1]). Returns the final hidden states [B, T, d].
 */
export function trunk(g: Graph, a: Architecture, P: Params, ids: Tensor, positions: Tensor, attend: Attend): Tensor {
  const d = a.dModel;
  const posTable = a.positions === 'learned' ? P.pos_emb! : g.constant(sinusoidalTable(a.context, d), [a.context, d]);
  let x = g.add(g.gather(P.tok_emb!, ids), g.gather(posTable, positions));
  for (let l = 0; l < a.layers; l++) {
    const h = norm(g, a, P, `h${l}.ln1`, x);
    const q = linear(g, a, P, `h${l}.attn.q`, h);
    const k = linear(g, a, P, `h${l}.attn.k`, h);
    const v = linear(g, a, P, `h${l}.attn.v`, h);
    x = g.add(x, linear(g, a, P, `h${l}.attn.o`, attend(l, q, k, v)));
    const m = norm(g, a, P, `h${l}.ln2`, x);
    const u = linear(g, a, P, `h${l}.mlp.fc`, m);
    x = g.add(x, linear(g, a, P, `h${l}.mlp.proj`, a.activation === 'gelu' ? g.gelu(u) : g.relu(u)));
  }
  return norm(g, a, P, 'lnf', x);
}

/** Logits [..., V] of hidden states [..., d]. */
export function head(g: Graph, a: Architecture, P: Params, h: Tensor): Tensor {
  return a.tiedEmbeddings ? g.matmul(h, P.tok_emb!, { transB: true }) : g.matmul(h, P['head.w']!);
}

/**
 * Causal multi-head self-attention over the whole sequence; `keys` receives each layer's head-split
 * k and v [B, H, T, dh] (the prefill's cache).
 */
export function causalAttention(
  g: Graph,
  a: Architecture,
  positions: Tensor,
  keys?: (layer: number, k: Tensor, v: Tensor) => void,
): Attend {
  const H = a.heads;
  const dh = a.dModel / H;
  // bias[i, j] = −1e9 where key j comes after query i
  const future = g.greater(g.unsqueeze(positions, [0]), g.unsqueeze(positions, [1]));
  const bias = g.where(future, g.scalar(NEG), g.scalar(0));
  const split = (t: Tensor) => g.transpose(g.reshape(t, [0, 0, H, dh]), [0, 2, 1, 3]);
  return (layer, q, k, v) => {
    const [qh, kh, vh] = [split(q), split(k), split(v)];
    keys?.(layer, kh, vh);
    const s = g.add(g.matmul(qh, kh, { transB: true, alpha: 1 / Math.sqrt(dh) }), bias);
    return g.reshape(g.transpose(g.matmul(g.softmax(s), vh), [0, 2, 1, 3]), [0, 0, a.dModel]);
  };
}

/** What a training-step graph computes. */
export interface StepGraphOptions {
  /** GRPO surrogate (with or without the KL term) or SFT cross-entropy. */
  readonly objective: 'grpo' | 'grpo-kl' | 'ce';
  /** Fuse clipping and AdamW into the graph (else the graph outputs gradients). */
  readonly optimizer?: AdamWOptions;
  /** Clip the global gradient norm to this (≤ 0: no clipping). */
  readonly gradClip: number;
}

/** A graph with its named outputs. */
export interface BuiltGraph {
  readonly graph: Graph;
  readonly outputs: [string, Tensor][];
}

/**
 * The training step. Inputs: every parameter (by name) and, when the optimizer is fused, its
 * moments `m.<name>`, `v.<name>` and AdamW's scalars; `ids` [B, T] (the sequence), `targets` [B, T]
 * (the next token at each position), `weights` [B, T] (aggregation weight of each target, 0 for
 * prompt and padding), `inv_temperature`; for GRPO `old_logprobs` [B, T], `advantages` [B, 1],
 * `ratio_low`, `ratio_high` (1 − ε_low, 1 + ε_high) and, with the KL term, `ref_logprobs` [B, T]
 * and `beta`. Outputs: `loss`, `logprobs` [B, T] (log πθ of the targets before the update),
 * `grad_norm`, then `next.<name>`, `next_m.<name>`, `next_v.<name>` (fused) or `grad.<name>`.
 */
export function buildStepGraph(a: Architecture, specs: readonly ParamSpec[], o: StepGraphOptions): BuiltGraph {
  const g = new G(`train-${o.objective}${o.optimizer ? '-adamw' : '-grad'}`);
  const params = declareParams(g, specs);
  const P = byName(specs, params);
  const ids = g.input('ids', 'int32', ['B', 'T']);
  const targets = g.input('targets', 'int32', ['B', 'T']);
  const weights = g.input('weights', 'float32', ['B', 'T']);
  const invTemp = g.input('inv_temperature', 'float32', []);
  const positions = g.rangeLike(ids, 1);
  const h = trunk(g, a, P, ids, positions, causalAttention(g, a, positions));
  const lp = tokenLogprobs(g, head(g, a, P, h), targets, invTemp);
  let loss: Tensor;
  if (o.objective === 'ce') {
    loss = crossEntropy(g, lp, weights);
  } else {
    loss = grpoObjective(g, lp, {
      old: g.input('old_logprobs', 'float32', ['B', 'T']),
      advantages: g.input('advantages', 'float32', ['B', 1]),
      weights,
      ratioLow: g.input('ratio_low', 'float32', []),
      ratioHigh: g.input('ratio_high', 'float32', []),
      ...(o.objective === 'grpo-kl'
        ? { ref: g.input('ref_logprobs', 'float32', ['B', 'T']), beta: g.input('beta', 'float32', []) }
        : {}),
    });
  }
  const grads = gradients(loss, params);
  const outputs: [string, Tensor][] = [
    ['loss', loss],
    ['logprobs', lp],
  ];
  if (o.optimizer) {
    const { grads: clipped, norm: gradNorm } = clipByGlobalNorm(g, grads, o.gradClip);
    const m = declareParams(g, specs, 'm.');
    const v = declareParams(g, specs, 'v.');
    const decayed = specs.map((s) => s.decay);
    const up = adamwUpdate(g, { params, grads: clipped, m, v, decayed }, adamwInputs(g), o.optimizer);
    outputs.push(['grad_norm', gradNorm]);
    specs.forEach((s, i) =>
      outputs.push([`next.${s.name}`, up.params[i]!], [`next_m.${s.name}`, up.m[i]!], [`next_v.${s.name}`, up.v[i]!]),
    );
  } else {
    specs.forEach((s, i) => outputs.push([`grad.${s.name}`, grads[i]!]));
  }
  return { graph: g, outputs };
}

/**
 * The optimizer alone (after gradient accumulation): inputs the parameters, `grad.<name>`,
 * `m.<name>`, `v.<name>` and AdamW's scalars; outputs `grad_norm` and the new parameters and moments.
 */
export function buildApplyGraph(specs: readonly ParamSpec[], optimizer: AdamWOptions, gradClip: number): BuiltGraph {
  const g = new G('adamw');
  const params = declareParams(g, specs);
  const grads = declareParams(g, specs, 'grad.');
  const m = declareParams(g, specs, 'm.');
  const v = declareParams(g, specs, 'v.');
  const { grads: clipped, norm } = clipByGlobalNorm(g, grads, gradClip);
  const decayed = specs.map((s) => s.decay);
  const up = adamwUpdate(g, { params, grads: clipped, m, v, decayed }, adamwInputs(g), optimizer);
  const outputs: [string, Tensor][] = [['grad_norm', norm]];
  specs.forEach((s, i) =>
    outputs.push([`next.${s.name}`, up.params[i]!], [`next_m.${s.name}`, up.m[i]!], [`next_v.${s.name}`, up.v[i]!]),
  );
  return { graph: g, outputs };
}

/** Forward only: `logprobs` [B, T] of `targets` given `ids` at `inv_temperature` (reference log-probabilities). */
export function buildLogprobGraph(a: Architecture, specs: readonly ParamSpec[]): BuiltGraph {
  const g = new G('logprobs');
  const P = byName(specs, declareParams(g, specs));
  const ids = g.input('ids', 'int32', ['B', 'T']);
  const targets = g.input('targets', 'int32', ['B', 'T']);
  const invTemp = g.input('inv_temperature', 'float32', []);
  const positions = g.rangeLike(ids, 1);
  const h = trunk(g, a, P, ids, positions, causalAttention(g, a, positions));
  return { graph: g, outputs: [['logprobs', tokenLogprobs(g, head(g, a, P, h), targets, invTemp)]] };
}

/** Prefill: `ids` [B, P] → `logits` [B, P, V] and every layer's `k<l>`, `v<l>` [B, H, P, dh]. */
export function buildPrefillGraph(a: Architecture, specs: readonly ParamSpec[]): BuiltGraph {
  const g = new G('prefill');
  const P = byName(specs, declareParams(g, specs));
  const ids = g.input('ids', 'int32', ['B', 'P']);
  const positions = g.rangeLike(ids, 1);
  const kv: [string, Tensor][] = [];
  const h = trunk(
    g,
    a,
    P,
    ids,
    positions,
    causalAttention(g, a, positions, (l, k, v) => kv.push([`k${l}`, k], [`v${l}`, v])),
  );
  return { graph: g, outputs: [['logits', head(g, a, P, h)], ...kv] };
}

/**
 * One decoding step with a KV cache. Inputs: `ids` [B, 1] (the newest token), `positions` [B, 1],
 * `cache_bias` [B, 1, 1, S] (0 for valid cache slots, −1e9 elsewhere), `cache_k<l>`, `cache_v<l>`
 * [B, H, S, dh]. The new token attends to the valid slots and to itself with one softmax over both,
 * computed without concatenating the cache (a concatenation would copy it every step). Outputs
 * `logits` [B, V] and `k<l>`, `v<l>` [B, H, dh] for the host to write into slot `position`.
 */
export function buildDecodeGraph(a: Architecture, specs: readonly ParamSpec[]): BuiltGraph {
  const g = new G('decode');
  const P = byName(specs, declareParams(g, specs));
  const H = a.heads;
  const dh = a.dModel / H;
  const ids = g.input('ids', 'int32', ['B', 1]);
  const positions = g.input('positions', 'int32', ['B', 1]);
  const bias = g.input('cache_bias', 'float32', ['B', 1, 1, 'S']);
  const cache = Array.from(
    { length: a.layers },
    (_, l) =>
      [
        g.input(`cache_k${l}`, 'float32', ['B', H, 'S', dh]),
        g.input(`cache_v${l}`, 'float32', ['B', H, 'S', dh]),
      ] as const,
  );
  const kv: [string, Tensor][] = [];
  const alpha = 1 / Math.sqrt(dh);
  const attend: Attend = (l, q, k, v) => {
    const [ck, cv] = cache[l]!;
    const split = (t: Tensor) => g.reshape(t, [-1, H, 1, dh]); // [B, H, 1, dh] (T = 1)
    const [qh, kh, vh] = [split(q), split(k), split(v)];
    kv.push([`k${l}`, g.reshape(kh, [-1, H, dh])], [`v${l}`, g.reshape(vh, [-1, H, dh])]);
    const sc = g.add(g.matmul(qh, ck, { transB: true, alpha }), bias); // [B, H, 1, S]
    const sn = g.scale(g.reduceSum(g.mul(qh, kh), [-1], true), alpha); // [B, H, 1, 1]
    const m = g.max(g.reduceMax(sc, [-1], true), sn);
    const ec = g.exp(g.sub(sc, m));
    const en = g.exp(g.sub(sn, m));
    const z = g.add(g.reduceSum(ec, [-1], true), en);
    const o = g.div(g.add(g.matmul(ec, cv), g.mul(en, vh)), z); // [B, H, 1, dh]
    return g.reshape(o, [-1, 1, a.dModel]);
  };
  const h = trunk(g, a, P, ids, positions, attend);
  return { graph: g, outputs: [['logits', g.reshape(head(g, a, P, h), [-1, a.vocab])], ...kv] };
}

/** The portable inference model: `input_ids` int64 [batch, sequence] → `logits` [batch, sequence, vocab]. */
export function buildInferenceGraph(a: Architecture, specs: readonly ParamSpec[]): BuiltGraph & { params: Tensor[] } {
  const g = new G('corl-transformer');
  const params = declareParams(g, specs);
  const P = byName(specs, params);
  const ids = g.input('input_ids', 'int64', ['batch', 'sequence']);
  const positions = g.rangeLike(ids, 1);
  const h = trunk(g, a, P, ids, positions, causalAttention(g, a, positions));
  return { graph: g, outputs: [['logits', head(g, a, P, h)]], params };
}
