import type { JsonSchema, PluginKind } from '../contracts/plugin';
import { serveSection } from './serve-schema';

/** The largest seed a config takes. */
export const MAX_CONFIG_SEED = 4294967295;

/** A plugin selection slot of the given kind (validated by the `corlPlugin` keyword at run time). */
export function selection(kind: PluginKind, description: string, defaultName?: string): JsonSchema {
  return {
    corlPlugin: kind,
    description,
    ...(defaultName ? { default: defaultName } : {}),
  };
}

const sampling = (defaults: { temperature: number; topP: number; maxTokens: number }): JsonSchema => ({
  type: 'object',
  description: 'sampling settings; the seed is derived from the run seed, the agent index and the step',
  properties: {
    temperature: {
      type: 'number',
      minimum: 0,
      default: defaults.temperature,
      description: 'softmax temperature; 0 = greedy',
    },
    topP: {
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 1,
      default: defaults.topP,
      description: 'nucleus sampling mass',
    },
    maxTokens: {
      type: 'integer',
      minimum: 1,
      default: defaults.maxTokens,
      description: 'maximum new tokens per completion',
    },
    stop: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'extra stop strings' },
  },
  additionalProperties: false,
  default: {},
});

/**
 * The root schema of a corl config (draft 2020-12). Plugin slots carry the `corlPlugin` keyword;
 * the published schema (schema/corl.schema.json) expands them into each plugin's options schema.
 */
export function rootSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://corl.dev/schema/corl.schema.json',
    title: 'corl config',
    type: 'object',
    required: ['task', 'agents', 'topology', 'reward'],
    properties: {
      $schema: { type: 'string', description: 'path or URL of this schema, for editors' },
      name: {
        type: 'string',
        minLength: 1,
        pattern: '^[A-Za-z0-9._-]+$',
        description: 'run name; defaults to the config file name',
      },
      description: { type: 'string', description: 'free text shown in reports' },
      seed: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_CONFIG_SEED,
        default: 0,
        description: 'root seed; agent n uses seed + n for initialization and sampling',
      },
      dataSeed: {
        type: 'integer',
        minimum: 0,
        maximum: 4294967295,
        description: 'seed of the problem order shared by every agent; defaults to seed',
      },
      labelFree: {
        type: 'boolean',
        default: false,
        description: 'refuse reward sources that read ground truth (provably label-free run)',
      },
      plugins: {
        type: 'array',
        items: { type: 'string', minLength: 1 },
        default: [],
        description:
          'plugin modules to load: paths relative to this file ("./my-plugin.js") or package names; each exports register(plugins)',
      },
      task: selection('task', 'where problems come from'),
      agents: {
        type: 'array',
        minItems: 1,
        description:
          'the cohort: one entry per agent, each with its own policy (separate parameters, optimizer and seed)',
        items: {
          type: 'object',
          required: ['policy'],
          properties: {
            name: {
              type: 'string',
              minLength: 1,
              pattern: '^[A-Za-z0-9._-]+$',
              description: 'display name; defaults to agent-<index>',
            },
            policy: selection('policy', 'the model this agent samples from and trains'),
          },
          additionalProperties: false,
        },
      },
      topology: selection('topology', 'who supervises whom: "corl:ring" (Co-RL), "corl:self" (TTRL)'),
      reward: selection('reward', 'how completions are rewarded: "corl:vote", "corl:ground-truth", ...'),
      diversity: selection('diversity', 'per-agent view of each problem (e.g. rephrased inputs)', 'corl:none'),
      extractor: selection('extractor', 'finds the final answer in a completion', 'corl:math'),
      equivalence: selection('equivalence', 'canonical answer keys and answer equality', 'corl:math'),
      grading: selection(
        'equivalence',
        'the equivalence that grades answers against references (monitoring, evaluation, a reward source that reads ground truth); absent: "equivalence" when it is trusted with references (a built-in, or one whose manifest declares readsReferences)',
      ),
      advantage: selection('advantage', 'turns rewards into advantages', 'corl:grpo'),
      interaction: selection(
        'interaction',
        'multi-round discussion: agents read their neighbours\' previous answers and answer again ("corl:debate", MAPoRL); absent: one round, no discussion',
      ),
      metrics: {
        type: 'array',
        items: selection('metrics', 'an extra metrics sink'),
        default: [],
        description: 'extra metrics sinks (metrics.jsonl in the run directory is always written)',
      },
      trainer: {
        type: 'object',
        default: {},
        description: 'the GRPO loop',
        properties: {
          steps: { type: 'integer', minimum: 0, default: 20, description: 'training steps' },
          batchSize: {
            type: 'integer',
            minimum: 1,
            default: 8,
            description: 'prompts per step, the same for every agent',
          },
          groupSize: {
            type: 'integer',
            minimum: 1,
            default: 8,
            description: 'completions per prompt (K); with trainSamples, the M samples drawn and voted over',
          },
          trainSamples: {
            type: 'integer',
            minimum: 0,
            default: 0,
            description:
              "TTRL's vote-on-more split: train on the first N of each group's groupSize (M) samples, labels voted over all M (2 <= N <= M); 0: train on all",
          },
          epochs: { type: 'integer', minimum: 1, default: 1, description: "update passes over each step's batch" },
          sampling: sampling({ temperature: 1, topP: 1, maxTokens: 64 }),
          loss: {
            type: 'object',
            default: {},
            properties: {
              type: {
                enum: ['grpo', 'bnpo', 'dr_grpo', 'dapo'],
                default: 'bnpo',
                description: 'per-token aggregation (docs/algorithms/grpo.md)',
              },
              clipLow: {
                type: 'number',
                minimum: 0,
                maximum: 1,
                default: 0.2,
                description: 'epsilon_low of the ratio clip',
              },
              clipHigh: { type: 'number', minimum: 0, default: 0.2, description: 'epsilon_high of the ratio clip' },
              beta: {
                type: 'number',
                minimum: 0,
                default: 0,
                description: 'weight of the k3 KL penalty to the initial policy',
              },
              microBatch: {
                type: 'integer',
                minimum: 0,
                default: 0,
                description:
                  'bnpo only: sequences per micro-batch as TRL accumulates them (each micro-batch divided by its own token count, then averaged); 0: the whole batch, one token mean (docs/algorithms/grpo.md)',
              },
            },
            additionalProperties: false,
          },
          evalEvery: {
            type: 'integer',
            minimum: 0,
            default: 10,
            description: 'evaluate every N steps (0: only before and after)',
          },
          checkpointEvery: {
            type: 'integer',
            minimum: 0,
            default: 10,
            description: 'checkpoint every N steps (0: only at the end)',
          },
          keepCheckpoints: {
            type: 'integer',
            minimum: 1,
            default: 2,
            description: 'checkpoints kept on disk (older ones are deleted once a newer one is recorded)',
          },
          saveRollouts: {
            type: 'boolean',
            default: false,
            description: 'write every completion with its key, reward and advantage to rollouts.jsonl',
          },
          logEvery: {
            type: 'integer',
            minimum: 1,
            default: 1,
            description: 'plain progress line every N steps when not on a terminal',
          },
        },
        additionalProperties: false,
      },
      eval: {
        type: 'object',
        default: {},
        description: 'held-out evaluation (ground truth used for monitoring only)',
        properties: {
          atStart: { type: 'boolean', default: true, description: 'evaluate the base policies before training' },
          split: {
            enum: ['test', 'validation'],
            default: 'test',
            description:
              "which problems to evaluate on: the held-out test split, or the task's validation split (for choosing settings without touching the test split)",
          },
          maxProblems: {
            type: 'integer',
            minimum: 0,
            default: 0,
            description: 'evaluate at most N held-out problems (0: all)',
          },
          samples: {
            type: 'integer',
            minimum: 1,
            default: 1,
            description: "samples per problem; pass@1 is their mean accuracy, maj@n their majority's",
          },
          ensemble: {
            type: 'integer',
            minimum: 0,
            default: 0,
            description:
              'budget-fair ensemble: pool this many samples of every agent into one majority vote (0: off; at most `samples`)',
          },
          sampling: sampling({ temperature: 0.6, topP: 0.95, maxTokens: 64 }),
        },
        additionalProperties: false,
      },
      pretrain: {
        type: 'object',
        default: {},
        description: "`corl pretrain`: SFT (cross-entropy) on the task's pretraining text",
        properties: {
          steps: { type: 'integer', minimum: 1, default: 1000, description: 'optimizer steps' },
          batchSize: { type: 'integer', minimum: 1, default: 64, description: 'texts per step' },
          evalEvery: {
            type: 'integer',
            minimum: 0,
            default: 0,
            description: 'held-out evaluation every N steps (0: only at the end)',
          },
          logEvery: { type: 'integer', minimum: 1, default: 50, description: 'progress line every N steps' },
          corpus: {
            type: 'string',
            minLength: 1,
            description:
              'a JSONL file (or .jsonl.gz) of {"prompt", "completion"} rows to pretrain on instead of the task\'s corpus, relative to the config file; prompts are context only (e.g. a verifier\'s labelled verdicts); the task\'s pass@1 is then not measured',
          },
        },
        additionalProperties: false,
      },
      serve: serveSection(),
    },
    additionalProperties: false,
  };
}

/** The plugin slots at the top level of a config, with their kinds (for documentation and checks). */
export const ROOT_SLOTS: ReadonlyArray<{ path: string; kind: PluginKind }> = [
  { path: 'task', kind: 'task' },
  { path: 'agents[].policy', kind: 'policy' },
  { path: 'topology', kind: 'topology' },
  { path: 'reward', kind: 'reward' },
  { path: 'diversity', kind: 'diversity' },
  { path: 'extractor', kind: 'extractor' },
  { path: 'equivalence', kind: 'equivalence' },
  { path: 'grading', kind: 'equivalence' },
  { path: 'advantage', kind: 'advantage' },
  { path: 'interaction', kind: 'interaction' },
  { path: 'metrics[]', kind: 'metrics' },
];
