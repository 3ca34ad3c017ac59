// The one batched decoding loop of the policies that sample token by token from a KV-cached model
// (corl:transformer's shards, corl:onnx-lm). The loop owns what they share: each row's random stream
// and token choice (sampling.ts), its tokens, log-probabilities and statistics, when it finishes and
// which rows are still active. The model owns its cache: `prefill` gives every row's first logits,
// `step` advances the active rows by the token each chose last (and compacts or grows its cache as
// it sees fit), `check` says whether a chosen token ends its row (an end token, a stop string, the
// context). A row's draws come only from its own stream, so its completion depends on its seed, not
// on the other rows of the batch nor on how the model lays out its cache.
import type { Rng } from '../../../core/util/rng';
import { chooseToken, type TokenRule } from './sampling';

/** One sequence to decode. */
export interface DecodeRow {
  readonly temperature: number;
  readonly topP: number;
  /** At most this many new tokens; 0 or less: none (the model is not asked for any). */
  readonly maxTokens: number;
  /** This row's random stream. */
  readonly rng: Rng;
  /** Never choose the loop's `end` token before this many tokens. */
  readonly minTokens?: number;
}

/** Logits of a batch of rows: row r's `vocab` entries start at `offset(r)`. */
export interface StepLogits {
  readonly logits: Float32Array;
  readonly vocab: number;
  offset(row: number): number;
}

/** How a chosen token ends its row: `stop` (an end token or stop string), `full` (no room left), or not at all. */
export type RowCheck = 'stop' | 'full' | undefined;

/** The model side of the loop. */
export interface DecodeModel {
  /** Logits of every row's first new token (after its prompt). */
  prefill(): Promise<StepLogits>;
  /**
   * One token for each row of `active` (ascending, never empty): feed each its last chosen token
   * (`tokens[r].at(-1)`, at position prompt length + `tokens[r].length` − 1).
   */
  step(active: readonly number[], tokens: readonly (readonly number[])[]): Promise<StepLogits>;
  /** Row `r` has just chosen `tokens.at(-1)`: does that end it? (Reaching `maxTokens` is the loop's own check.) */
  check(row: number, tokens: readonly number[]): RowCheck;
}

/** What decoding returns per row. */
export interface DecodedRow {
  readonly tokens: number[];
  readonly logprobs: number[];
  /** Per-token entropies and mean log-probabilities (empty unless `tokenStats`). */
  readonly entropies: number[];
  readonly meanLogprobs: number[];
  finish: 'stop' | 'length';
}

/** Options of the loop. */
export interface DecodeOptions {
  /** Compute per-token entropies and mean log-probabilities. */
  readonly tokenStats: boolean;
  /** The token a row's `minTokens` bans (−1: none). */
  readonly end?: number;
}

/** Decode every row until it finishes: one prefill, then one `step` per token over the rows still active. */
export async function decodeRows(
  rows: readonly DecodeRow[],
  model: DecodeModel,
  options: DecodeOptions,
): Promise<DecodedRow[]> {
  const out: DecodedRow[] = rows.map(() => ({
    tokens: [],
    logprobs: [],
    entropies: [],
    meanLogprobs: [],
    finish: 'length',
  }));
  if (rows.length === 0) return out;
  const done = new Uint8Array(rows.length);
  const end = options.end ?? -1;
  let scratch = new Float64Array(0);
  const rules: TokenRule[] = rows.map((row) => ({
    temperature: row.temperature,
    topP: row.topP,
    rng: row.rng,
    stats: options.tokenStats,
  }));
  const choose = (r: number, step: StepLogits): void => {
    const row = rows[r]!;
    const o = out[r]!;
    if (scratch.length < 2 * step.vocab) scratch = new Float64Array(2 * step.vocab);
    const banned = o.tokens.length < (row.minTokens ?? 0) ? end : -1;
    const c = chooseToken(step.logits, step.offset(r), step.vocab, rules[r]!, scratch, banned);
    o.tokens.push(c.token);
    o.logprobs.push(c.logprob);
    if (options.tokenStats) {
      o.entropies.push(c.entropy);
      o.meanLogprobs.push(c.meanLogprob);
    }
    const check = model.check(r, o.tokens);
    if (check === 'stop') o.finish = 'stop';
    if (check !== undefined || o.tokens.length >= row.maxTokens) done[r] = 1;
  };

  const first = await model.prefill();
  rows.forEach((row, r) => {
    if (row.maxTokens <= 0) done[r] = 1;
    else choose(r, first);
  });
  const tokens = out.map((o) => o.tokens);
  let active = rows.map((_, r) => r).filter((r) => !done[r]);
  while (active.length > 0) {
    const next = await model.step(active, tokens);
    for (const r of active) choose(r, next);
    active = active.filter((r) => !done[r]);
  }
  return out;
}
