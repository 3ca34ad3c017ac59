import type { LossType } from '../contracts/policy';
import type { ResolvedSelection } from '../contracts/plugin';

/** Sampling settings as the config gives them (the seed is derived per agent and step). */
export interface SamplingConfig {
  /** Softmax temperature; 0 = greedy. */
  readonly temperature: number;
  /** Nucleus mass in (0, 1]. */
  readonly topP: number;
  /** Maximum new tokens per completion. */
  readonly maxTokens: number;
  /** Extra stop strings. */
  readonly stop: readonly string[];
}

/** The GRPO training loop's settings. */
export interface TrainerConfig {
  /** Number of training steps. */
  readonly steps: number;
  /** Prompts per agent per step (every agent sees the same prompts). */
  readonly batchSize: number;
  /** Completions per prompt, K (with `trainSamples`, the M samples drawn and voted over). */
  readonly groupSize: number;
  /** Vote-on-more (TTRL): advantages and the update over the first N of each group's M samples; 0: all. */
  readonly trainSamples: number;
  /** Update passes over each step's batch (PPO epochs). */
  readonly epochs: number;
  /** Training-time sampling. */
  readonly sampling: SamplingConfig;
  /** The objective. */
  readonly loss: {
    readonly type: LossType;
    readonly clipLow: number;
    readonly clipHigh: number;
    readonly beta: number;
    /** bnpo only: sequences per micro-batch (TRL's per-device batch); 0: the whole batch. */
    readonly microBatch: number;
  };
  /** Evaluate on the held-out split every this many steps (0: only before and after training). */
  readonly evalEvery: number;
  /** Checkpoint every this many steps (0: only at the end). */
  readonly checkpointEvery: number;
  /** Checkpoints kept on disk. */
  readonly keepCheckpoints: number;
  /** Write every completion with its key, reward and advantage to rollouts.jsonl. */
  readonly saveRollouts: boolean;
  /** Print a plain progress line every this many steps when stderr is not a terminal. */
  readonly logEvery: number;
}

/** Held-out evaluation settings. */
export interface EvalConfig {
  /** Evaluate before the first step (the base model). */
  readonly atStart: boolean;
  /** Which problems are evaluated: the held-out test split, or the task's validation split. */
  readonly split: 'test' | 'validation';
  /** Evaluate at most this many held-out problems (0: all). */
  readonly maxProblems: number;
  /** Samples per problem: pass@1 is their mean accuracy, maj@n their majority's. */
  readonly samples: number;
  /** Budget-fair ensemble: pool this many samples of every agent into one majority vote (0: off). */
  readonly ensemble: number;
  /** Evaluation sampling. */
  readonly sampling: SamplingConfig;
}

/** `corl pretrain` settings (SFT: cross-entropy on the task's pretraining text). */
export interface PretrainConfig {
  /** Optimizer steps. */
  readonly steps: number;
  /** Texts per step. */
  readonly batchSize: number;
  /** Evaluate on the held-out split every this many steps (0: only at the end). */
  readonly evalEvery: number;
  /** Print a progress line every this many steps. */
  readonly logEvery: number;
  /** A JSONL file of `{prompt, completion}` rows trained on instead of the task's corpus (relative to the config file). */
  readonly corpus?: string;
}

/** `corl serve` settings (the `serve` section; see core/config/serve-schema.ts). */
export interface ServeSettings {
  /** Address to bind. */
  readonly host: string;
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** Largest accepted request body. */
  readonly maxBodyBytes: number;
  /** Completions every posted group must have; 0 accepts any size. */
  readonly groupSize: number;
  /** Most completions in one posted group. */
  readonly maxCompletions: number;
  /** Most completions (or /get_reward samples) in one request. */
  readonly maxRequestCompletions: number;
  /** Most `testInputs` entries in one group. */
  readonly maxTestInputs: number;
  /** Longest answer key or label kept as it is (longer: its digest). */
  readonly maxKeyChars: number;
  /** Most open client connections. */
  readonly maxConnections: number;
  /** Most open client connections from one peer address. */
  readonly maxConnectionsPerPeer: number;
  /** Most POST requests of one agent in progress at once (unset: its share of one peer's places). */
  readonly maxHeldPerAgent?: number;
  /** Seconds a client may take to send headers, a whole request, and an idle keep-alive connection may stay open. */
  readonly timeouts: { readonly headers: number; readonly body: number; readonly work: number; readonly idle: number };
  /** Requests with an Idempotency-Key remembered per agent. */
  readonly keepReplies: number;
  /** Bytes of stored replies (as JSON) remembered per agent beside `keepReplies`. */
  readonly keepReplyBytes: number;
  /** Agent tokens file (relative to the config file), when given. */
  readonly tokens?: string;
  /** Label journal path (relative to the config file), when given; false: no journal. */
  readonly journal?: string | false;
  /** MiB the journal may grow beyond twice what its last compaction wrote before the running service compacts it. */
  readonly journalGrowth: number;
  /** The cross-agent exchange of POST /v1/groups. */
  readonly exchange: {
    /** Longest wait for supervisors' answers, in seconds. */
    readonly wait: number;
    /** What a group gets when the wait runs out. */
    readonly fallback: 'self' | 'zero' | 'error';
    /** Steps kept, counted back from the newest. */
    readonly keepSteps: number;
    /** The newest step of an empty exchange. */
    readonly startStep: number;
    /** How far beyond the newest step a post may be. */
    readonly maxStepsAhead: number;
    /** Most distinct group ids per step. */
    readonly maxGroupsPerStep: number;
    /** Most characters of answer keys one agent may hold in each exchange, all its held steps together. */
    readonly maxHeldKeyChars: number;
  };
  /** POST /get_reward (OpenRLHF). */
  readonly getReward: {
    /** Agent scored when the URL names none. */
    readonly agent?: string;
    /** Samples per prompt collected before a group source votes. */
    readonly groupSize: number;
    /** Seconds a partial group waits before it is scored as it is. */
    readonly wait: number;
    /** Most samples of one agent waiting at the barrier at once. */
    readonly maxPending: number;
    /** Groups each agent keeps, counted back from the one it posted last. */
    readonly keepGroups: number;
    /** Rounds (epochs) of each prompt kept, counted back from its newest. */
    readonly keepRounds: number;
    /** What identifies a group. */
    readonly groupBy: 'prompt' | 'label';
    /** Special tokens removed from the end of responses. */
    readonly stripTokens: readonly string[];
  };
  /** POST /v1/samples (one completion per sample; the service forms the groups). */
  readonly samples: {
    /** Seconds an incomplete group waits for its declared size before it is scored as it is. */
    readonly wait: number;
    /** Most samples of one agent waiting for the rest of their group at once (and most uncollected deferred answers). */
    readonly maxPending: number;
    /** Most POST /v1/samples/wait requests of one agent held open at once. */
    readonly maxWaits: number;
    /** Longest hold in seconds of a POST /v1/samples/wait with no answer ready. */
    readonly poll: number;
  };
}

/** One agent of the cohort. */
export interface AgentConfig {
  /** Display name (defaults to `agent-<i>`). */
  readonly name: string;
  /** Its policy. */
  readonly policy: ResolvedSelection;
}

/** A validated, defaulted, frozen corl config. */
export interface CorlConfig {
  readonly $schema?: string;
  /** Run name (defaults to the config file's base name). */
  readonly name: string;
  readonly description?: string;
  /** Root seed; agent n samples and initializes with seed + n. */
  readonly seed: number;
  /** Seed of the data order, shared by all agents (defaults to `seed`). */
  readonly dataSeed: number;
  /** Refuse any reward source that reads ground truth. */
  readonly labelFree: boolean;
  /** Extra plugin modules (paths relative to the config file, or package names). */
  readonly plugins: readonly string[];
  readonly task: ResolvedSelection;
  readonly agents: readonly AgentConfig[];
  readonly topology: ResolvedSelection;
  readonly reward: ResolvedSelection;
  readonly diversity: ResolvedSelection;
  readonly extractor: ResolvedSelection;
  readonly equivalence: ResolvedSelection;
  /** The equivalence that grades against references, when the config names one (else `equivalence`, when trusted). */
  readonly grading?: ResolvedSelection;
  readonly advantage: ResolvedSelection;
  /** The interaction protocol, when the config has one (absent: agents answer once, alone). */
  readonly interaction?: ResolvedSelection;
  readonly metrics: readonly ResolvedSelection[];
  readonly trainer: TrainerConfig;
  readonly eval: EvalConfig;
  readonly pretrain: PretrainConfig;
  /** `corl serve` settings, when the config has a `serve` section. */
  readonly serve?: ServeSettings;
}
