// Options of `corl:onnx-lm`: the JSON Schema (with defaults) and the type derived from it.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { pathKeyword } from '../../../core/util/paths';

/** The options schema (draft 2020-12, defaults everywhere, no unknown keys). */
export const ONNX_LM_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['path'],
  properties: {
    path: {
      type: 'string',
      minLength: 1,
      ...pathKeyword('dir'),
      description:
        'model folder (relative to the config file, or a package reference "package:<package>/<folder>"): the optimum export with the ONNX model, tokenizer.json and config.json',
    },
    file: {
      type: 'string',
      minLength: 1,
      description: 'the ONNX file inside the folder; absent: model.onnx, else onnx/model.onnx',
    },
    template: {
      type: 'string',
      pattern: '\\{prompt\\}',
      default: '{prompt}',
      description:
        "prompt format: the text the model sees, with {prompt} replaced by the prompt (write a chat model's template literally here; Jinja chat templates are not applied)",
    },
    addSpecialTokens: {
      type: 'boolean',
      default: true,
      description: "let the tokenizer's post-processor add its special tokens (e.g. a BOS token) to the prompt",
    },
    eosTokenIds: {
      type: 'array',
      items: { type: 'integer', minimum: 0 },
      uniqueItems: true,
      description:
        "token ids that end a completion; absent: eos_token_id of generation_config.json, else of config.json, else tokenizer_config.json's eos_token",
    },
    maxContext: {
      type: 'integer',
      minimum: 2,
      description:
        'most tokens (prompt + completion) a sequence may hold; absent: max_position_embeddings (or n_positions) of config.json, else unbounded',
    },
    threads: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'onnxruntime intra-op threads; 0: an equal share of the cores among the open models',
    },
    dtype: {
      enum: ['float32'],
      default: 'float32',
      description: 'the KV cache type; only float32 exports are supported (export without --dtype fp16)',
    },
    family: {
      type: 'string',
      minLength: 1,
      description:
        'model family label (tells cross-family pairs from same-family ones in reports); absent: model_type of config.json',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type OnnxLmOptions = FromSchema<typeof ONNX_LM_OPTIONS_SCHEMA>;
