/** Why a completion ended. */
export type FinishReason = 'stop' | 'length' | 'error';

/**
 * One sampled completion with what training needs from it. Arrays are per generated token, in
 * order, and all have the same length as `tokenIds`.
 */
export interface Completion {
  /** The decoded completion text (without the prompt). */
  readonly text: string;
  /**
   * Generated token ids (without the prompt). A remote backend that reports a token's log-probability
   * but not its id puts -1 there (the length still counts tokens); such completions cannot train.
   */
  readonly tokenIds: readonly number[];
  /** log π_old(token | prefix) of each generated token under the sampling distribution's policy (temperature 1 logits unless the policy documents otherwise). */
  readonly logprobs: readonly number[];
  /** `stop` when a stop token or sequence ended it, `length` when `maxTokens` did. */
  readonly finishReason: FinishReason;
  /**
   * Per-token entropy H(p_t) of the next-token distribution, in nats. Present only when the
   * sampling call set `tokenStats: true` and the policy supports it.
   */
  readonly entropies?: readonly number[];
  /**
   * Per-token mean over the vocabulary of log p_t(v), i.e. (1/V) Σ_v log p_t(v). Together with
   * log V this gives the self-certainty KL(U‖p_t) = −log V − meanLogprob. Present only with `tokenStats`.
   */
  readonly meanLogprobs?: readonly number[];
}
