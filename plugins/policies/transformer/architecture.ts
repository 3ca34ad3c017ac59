// The decoder-only transformer's architecture and its parameters: names, shapes, deterministic
// initialization from a seed (GPT-2's scheme) and which ones take weight decay.
import { CorlError } from '../../../core/errors';
import { mixSeed, Rng } from '../../../core/util/rng';

/** Everything that determines the parameter shapes and the forward computation. */
export interface Architecture {
  /** Vocabulary size (from the tokenizer). */
  readonly vocab: number;
  readonly dModel: number;
  readonly layers: number;
  readonly heads: number;
  /** Maximum sequence length (prompt + completion + the leading end token). */
  readonly context: number;
  /** MLP hidden width = mlpRatio · dModel. */
  readonly mlpRatio: number;
  /** Pre-norm type. */
  readonly norm: 'layernorm' | 'rmsnorm';
  /** MLP activation (GELU: tanh approximation). */
  readonly activation: 'gelu' | 'relu';
  /** Learned position embeddings, or fixed sinusoidal ones. */
  readonly positions: 'learned' | 'sinusoidal';
  /** Output projection tied to the token embedding. */
  readonly tiedEmbeddings: boolean;
  /** Biases in the linear layers. */
  readonly bias: boolean;
  /** ε of the norms. */
  readonly normEps: number;
}

/** One parameter tensor. */
export interface ParamSpec {
  readonly name: string;
  readonly shape: readonly number[];
  readonly init: 'normal' | 'zeros' | 'ones';
  /** Standard deviation of a normal initialization. */
  readonly std: number;
  /** Whether AdamW's weight decay applies (matrices and embeddings; not biases or norm gains). */
  readonly decay: boolean;
}

/** Check an architecture; throws CORL_ERR_CONFIG_INVALID naming the option. */
export function checkArchitecture(a: Architecture): void {
  if (a.dModel % a.heads !== 0) {
    throw new CorlError(
      'CORL_ERR_CONFIG_INVALID',
      `expected dModel divisible by heads, got dModel ${a.dModel} and heads ${a.heads}`,
      { where: 'heads' },
    );
  }
  if (a.positions === 'sinusoidal' && a.dModel % 2 !== 0) {
    throw new CorlError(
      'CORL_ERR_CONFIG_INVALID',
      `expected an even dModel for sinusoidal positions, got ${a.dModel}`,
      { where: 'dModel' },
    );
  }
}

/** The parameters in a fixed order (the order of checkpoints and graph inputs). */
export function paramSpecs(a: Architecture): ParamSpec[] {
  const d = a.dModel;
  const hidden = a.mlpRatio * d;
  const std = 0.02;
  const resid = std / Math.sqrt(2 * a.layers);
  const out: ParamSpec[] = [];
  const p = (name: string, shape: number[], init: ParamSpec['init'], s = std, decay = init === 'normal') =>
    out.push({ name, shape, init, std: s, decay });
  const norm = (prefix: string) => {
    p(`${prefix}.g`, [d], 'ones');
    if (a.norm === 'layernorm') p(`${prefix}.b`, [d], 'zeros');
  };
  const linear = (prefix: string, n: number, m: number, s = std) => {
    p(`${prefix}.w`, [n, m], 'normal', s);
    if (a.bias) p(`${prefix}.b`, [m], 'zeros');
  };
  p('tok_emb', [a.vocab, d], 'normal');
  if (a.positions === 'learned') p('pos_emb', [a.context, d], 'normal', 0.01);
  for (let l = 0; l < a.layers; l++) {
    norm(`h${l}.ln1`);
    linear(`h${l}.attn.q`, d, d);
    linear(`h${l}.attn.k`, d, d);
    linear(`h${l}.attn.v`, d, d);
    linear(`h${l}.attn.o`, d, d, resid);
    norm(`h${l}.ln2`);
    linear(`h${l}.mlp.fc`, d, hidden);
    linear(`h${l}.mlp.proj`, hidden, d, resid);
  }
  norm('lnf');
  if (!a.tiedEmbeddings) p('head.w', [d, a.vocab], 'normal');
  return out;
}

/** Number of trainable scalars. */
export function parameterCount(a: Architecture): number {
  return paramSpecs(a).reduce((n, s) => n + s.shape.reduce((x, y) => x * y, 1), 0);
}

/** Deterministic initial values: each tensor from its own stream mixSeed(seed, name). */
export function initParams(a: Architecture, seed: number): Float32Array[] {
  return paramSpecs(a).map((s) => {
    const n = s.shape.reduce((x, y) => x * y, 1);
    const v = new Float32Array(n);
    if (s.init === 'ones') v.fill(1);
    else if (s.init === 'normal') {
      const rng = new Rng(mixSeed(seed, 'init', s.name));
      for (let i = 0; i < n; i++) v[i] = rng.normal() * s.std;
    }
    return v;
  });
}

/** The fixed sinusoidal position table [context, dModel] (Vaswani et al.). */
export function sinusoidalTable(context: number, d: number): Float32Array {
  const t = new Float32Array(context * d);
  for (let p = 0; p < context; p++) {
    for (let i = 0; i < d / 2; i++) {
      const f = p / 10000 ** ((2 * i) / d);
      t[p * d + 2 * i] = Math.sin(f);
      t[p * d + 2 * i + 1] = Math.cos(f);
    }
  }
  return t;
}
