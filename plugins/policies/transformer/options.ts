// Options of `corl:transformer`: the JSON Schema (with defaults) and the type derived from it.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { pathKeyword } from '../../../core/util/paths';

/** Digits, arithmetic, punctuation, letters and space: what the embedded tasks' texts use. */
export const DEFAULT_ALPHABET =
  '0123456789+-*/=()[]{}<>.,;:?!\'"\\_^$%&#@|~ abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** The options schema (draft 2020-12, defaults everywhere, no unknown keys). */
export const TRANSFORMER_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    family: {
      type: 'string',
      minLength: 1,
      description: 'model family label for reports (default: derived from the tokenizer and architecture)',
    },
    tokenizer: {
      type: 'object',
      default: {},
      description:
        'character-level tokenizer; ids 0 = end token, 1 = unknown character, then `tokens`, then the alphabet',
      properties: {
        alphabet: {
          type: 'string',
          minLength: 1,
          default: DEFAULT_ALPHABET,
          description: 'every character the model knows, each once',
        },
        tokens: {
          type: 'array',
          items: { type: 'string', minLength: 2 },
          uniqueItems: true,
          default: [],
          description: 'extra multi-character tokens, matched longest first (e.g. "\\\\boxed{")',
        },
        lowercase: { type: 'boolean', default: false, description: 'lower-case text before encoding' },
      },
      additionalProperties: false,
    },
    dModel: { type: 'integer', minimum: 8, maximum: 4096, default: 128, description: 'model width' },
    layers: { type: 'integer', minimum: 1, maximum: 64, default: 4, description: 'transformer blocks' },
    heads: {
      type: 'integer',
      minimum: 1,
      maximum: 64,
      default: 4,
      description: 'attention heads (must divide dModel)',
    },
    context: {
      type: 'integer',
      minimum: 4,
      maximum: 8192,
      default: 128,
      description: 'maximum sequence length in tokens (prompt + completion + 1)',
    },
    mlpRatio: {
      type: 'integer',
      minimum: 1,
      maximum: 16,
      default: 4,
      description: 'MLP hidden width = mlpRatio × dModel',
    },
    norm: { enum: ['layernorm', 'rmsnorm'], default: 'layernorm', description: 'pre-norm type' },
    activation: { enum: ['gelu', 'relu'], default: 'gelu', description: 'MLP activation (gelu: tanh approximation)' },
    positions: { enum: ['learned', 'sinusoidal'], default: 'learned', description: 'position embeddings' },
    tiedEmbeddings: { type: 'boolean', default: false, description: 'output projection shares the token embedding' },
    bias: { type: 'boolean', default: true, description: 'biases in the linear layers' },
    init: {
      type: 'object',
      default: {},
      description:
        'deterministic initialization (GPT-2 scheme: normal 0.02, residual projections scaled by 1/√(2·layers))',
      properties: {
        seed: {
          type: 'integer',
          minimum: 0,
          maximum: 4294967295,
          description: "initialization seed (default: the agent's seed)",
        },
      },
      additionalProperties: false,
    },
    checkpoint: {
      type: 'string',
      minLength: 1,
      ...pathKeyword('dir'),
      description:
        'load this checkpoint folder at start (relative to the config file, or a package reference such as "package:corl/models/slips/alpha", the models that ship with corl); options must match its architecture',
    },
    checkpointOptimizer: {
      type: 'boolean',
      default: true,
      description:
        'with `checkpoint`: also restore its AdamW moments and step counters (false: fresh optimizer, as when fine-tuning a base model with RL)',
    },
    optimizer: {
      type: 'object',
      default: {},
      description: 'AdamW with global gradient-norm clipping and a learning-rate schedule',
      properties: {
        lr: { type: 'number', exclusiveMinimum: 0, default: 3e-4, description: 'peak learning rate' },
        betas: {
          type: 'array',
          items: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
          minItems: 2,
          maxItems: 2,
          default: [0.9, 0.95],
          description: 'AdamW β₁, β₂',
        },
        eps: { type: 'number', exclusiveMinimum: 0, default: 1e-8, description: 'AdamW ε' },
        weightDecay: {
          type: 'number',
          minimum: 0,
          default: 0.01,
          description: 'decoupled weight decay of matrices and embeddings',
        },
        gradClip: {
          type: 'number',
          minimum: 0,
          default: 1,
          description: 'clip the global gradient norm to this (0: no clipping)',
        },
        schedule: {
          type: 'object',
          default: {},
          description: "learning-rate schedule over the run's steps (update and pretrainStep pass step and totalSteps)",
          properties: {
            type: {
              enum: ['constant', 'cosine'],
              default: 'constant',
              description: 'constant after warmup, or cosine decay to lr·minRatio at the last step',
            },
            warmupSteps: {
              type: 'integer',
              minimum: 0,
              default: 0,
              description: 'linear warmup steps (overrides warmupRatio when > 0)',
            },
            warmupRatio: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0,
              description: 'warmup as a fraction of the total steps',
            },
            minRatio: {
              type: 'number',
              minimum: 0,
              maximum: 1,
              default: 0.1,
              description: 'cosine floor as a fraction of lr',
            },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    threads: {
      type: 'integer',
      minimum: 0,
      maximum: 256,
      default: 0,
      description: 'cores for this model (0: an equal share of the machine among the open models)',
    },
    worker: {
      type: 'boolean',
      default: true,
      description: 'compute in worker threads (one data-parallel shard per core); false: in the calling thread',
    },
    miniBatchSize: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'sequences per optimizer step in update (0: the whole batch in one step)',
    },
    microBatchTokens: {
      type: 'integer',
      minimum: 16,
      default: 1024,
      description:
        'tokens per onnxruntime call (gradients are accumulated across calls; smaller keeps activations in cache)',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type TransformerOptions = FromSchema<typeof TRANSFORMER_OPTIONS_SCHEMA>;
