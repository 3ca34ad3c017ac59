import type { Completion } from './completion';

/** How to sample. The trainer fills every field; diversity strategies may override some per request. */
export interface SamplingOptions {
  /** Completions per prompt (the GRPO group size K). */
  readonly n: number;
  /** Softmax temperature; 0 means greedy decoding. */
  readonly temperature: number;
  /** Nucleus sampling mass in (0, 1]; 1 disables it. */
  readonly topP: number;
  /** Maximum number of generated tokens per completion. */
  readonly maxTokens: number;
  /**
   * Seed of this call. Same seed, same weights, same requests → the same completions. The trainer
   * derives it from the run seed, the agent index and the step, so agents never share samples.
   */
  readonly seed: number;
  /** Extra stop strings, on top of the policy's own end-of-sequence token. */
  readonly stop?: readonly string[];
  /** Also return per-token entropy and mean vocabulary log-probability (intrinsic rewards need them). */
  readonly tokenStats?: boolean;
}

/** One prompt to sample from, as an agent sees it. */
export interface SampleRequest {
  /** The problem this request is for (the trainer sets it), so errors and logs can name it. */
  readonly id?: string;
  /** The prompt text (already in the agent's phrasing). */
  readonly prompt: string;
  /**
   * Local image files (PNG, JPEG, GIF or WebP), for multimodal backends: chat backends send them as
   * image parts after the text; text-only backends refuse a request that has any.
   */
  readonly images?: readonly string[];
  /** Per-request overrides of the call's options (from a diversity strategy). `n` cannot be overridden. */
  readonly overrides?: Partial<Omit<SamplingOptions, 'n'>>;
}

/** Which per-token aggregation of the clipped surrogate to use. See docs/algorithms/grpo.md. */
export type LossType = 'grpo' | 'bnpo' | 'dr_grpo' | 'dapo';

/** The GRPO objective's hyperparameters, as the trainer config gives them. */
export interface LossOptions {
  /** Aggregation of per-token losses. */
  readonly type: LossType;
  /** Lower clip range ε_low: ratios below 1 − ε_low are clipped. */
  readonly clipLow: number;
  /** Upper clip range ε_high: ratios above 1 + ε_high are clipped. */
  readonly clipHigh: number;
  /** Weight β of the k3 KL penalty to the frozen reference policy; 0 disables it (no reference is kept). */
  readonly beta: number;
  /** L_max of dr_grpo's normaliser B·L_max: the sampling `maxTokens`. */
  readonly maxCompletionLength: number;
  /**
   * bnpo only: sequences per micro-batch in TRL's sense (each micro-batch's loss is its token sum
   * over its own token count; micro-batches are averaged). 0 or absent: the whole (mini-)batch is one.
   */
  readonly microBatch?: number;
}

/** One completion with its advantage, ready for the policy gradient. */
export interface TrainingSample {
  /** The prompt it was sampled from (the agent's phrasing). */
  readonly prompt: string;
  /** The completion with token ids and sampling-time log-probabilities (π_old). */
  readonly completion: Completion;
  /** Its advantage Â (the same value for every token of the completion). */
  readonly advantage: number;
}

/** One update call: a batch of samples and the objective. */
export interface UpdateBatch {
  /** All samples of this agent at this step (prompts × K). */
  readonly samples: readonly TrainingSample[];
  /** The objective. */
  readonly loss: LossOptions;
  /** The temperature the samples were drawn at (log-probabilities are computed at the same temperature). */
  readonly temperature: number;
  /** Updates completed before this one (TRL's `state.global_step`; 0 for the first), for learning-rate schedules. */
  readonly step: number;
  /** Total number of training steps of the run, for learning-rate schedules. */
  readonly totalSteps: number;
}

/** One step of supervised pretraining (`corl pretrain`): cross-entropy on whole texts. */
export interface PretrainBatch {
  /** Whole texts (prompt + worked solution), one sequence each. */
  readonly texts: readonly string[];
  /**
   * For each text, how many of its leading characters are prompt: their tokens are context only and
   * excluded from the loss (as in SFT). Absent: every token of every text is trained on.
   */
  readonly promptLengths?: readonly number[];
  /** Pretraining updates completed before this one (0 for the first), for learning-rate schedules. */
  readonly step: number;
  /** Total number of pretraining steps, for learning-rate schedules. */
  readonly totalSteps: number;
}

/** What an update reports; keys are metric names such as `loss/policy`, `loss/kl`, `loss/clip_fraction`, `optim/grad_norm`, `optim/lr`. */
export interface UpdateResult {
  /** Finite values by namespaced metric name, logged for this agent and step. */
  readonly metrics: Readonly<Record<string, number>>;
}

/** A self-description for logs, reports and `corl list`. */
export interface PolicyDescription {
  /** The plugin name that built it, e.g. `corl:transformer`. */
  readonly kind: string;
  /** Model family label (tokenizer + architecture), used to tell cross-family pairs from same-family ones. */
  readonly family: string;
  /** Number of trainable parameters, if known. */
  readonly parameters?: number;
  /** Whether `update` works. */
  readonly canTrain: boolean;
  /** Anything else worth showing (architecture, backend URL...). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * A model that samples completions and (optionally) learns from advantages. Every method is async
 * so a policy may run in a worker thread or behind a server. A policy that cannot train throws
 * `CORL_ERR_POLICY_CANNOT_TRAIN` from `update`.
 */
export interface Policy {
  /** Describe the model. */
  describe(): PolicyDescription;
  /**
   * Sample `options.n` completions for each request; the result is aligned with `requests`.
   * Deterministic for a given seed and weights.
   */
  sample(requests: readonly SampleRequest[], options: SamplingOptions): Promise<Completion[][]>;
  /** One pass of the clipped policy-gradient objective over the batch (one or more optimizer steps). */
  update(batch: UpdateBatch): Promise<UpdateResult>;
  /**
   * One optimizer step of supervised cross-entropy on `batch.texts` (`corl pretrain`). Optional:
   * policies without it cannot be pretrained (`CORL_ERR_POLICY_CANNOT_TRAIN`). Reports at least
   * `loss/ce` and `optim/lr`.
   */
  pretrainStep?(batch: PretrainBatch): Promise<UpdateResult>;
  /** Write weights, optimizer state and RNG state into `dir` (created if missing), atomically per file. */
  save(dir: string): Promise<void>;
  /** Restore exactly what `save` wrote; a corrupt or mismatched checkpoint throws a coded error. */
  load(dir: string): Promise<void>;
  /**
   * The policy's context window, for callers that build long prompts (interaction rounds): its size in
   * tokens and how many a prompt occupies (including tokens the policy adds, such as a start token).
   * Optional: without it prompts are sent whole and the backend enforces its own limit.
   */
  contextWindow?(): ContextWindow;
  /** Release threads, sessions, sockets. Optional. */
  close?(): Promise<void>;
}

/** A policy's context window (see {@link Policy.contextWindow}). */
export interface ContextWindow {
  /** Tokens the model reads at once: prompt plus completion. */
  readonly tokens: number;
  /** Tokens `prompt` occupies in the context. */
  count(prompt: string): number;
}
