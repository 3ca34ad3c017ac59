// Options of `corl:openai`: the JSON Schema (with defaults) and the type derived from it.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/** The options schema (draft 2020-12, defaults everywhere, no unknown keys). */
export const OPENAI_OPTIONS_SCHEMA = {
  type: 'object',
  required: ['model'],
  properties: {
    baseUrl: {
      type: 'string',
      pattern: '^https?://',
      default: 'http://127.0.0.1:8000/v1',
      description: 'server URL up to and including /v1 (vLLM, SGLang, llama.cpp server)',
    },
    model: {
      type: 'string',
      minLength: 1,
      description: 'model name the server serves (the `model` field of every request)',
    },
    endpoint: {
      enum: ['chat', 'completions'],
      default: 'chat',
      description: '/v1/chat/completions (messages, chat template, images) or /v1/completions (raw prompt text)',
    },
    systemPrompt: { type: 'string', description: 'chat only: a system message sent before each prompt' },
    apiKeyEnv: {
      type: 'string',
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description:
        'name of the environment variable holding the API key (sent as a bearer token); the key itself never goes in a config',
    },
    family: {
      type: 'string',
      minLength: 1,
      default: 'openai',
      description: 'model family label (tells cross-family pairs from same-family ones in reports)',
    },
    timeoutSeconds: { type: 'number', exclusiveMinimum: 0, default: 600, description: 'per-attempt request timeout' },
    retries: {
      type: 'integer',
      minimum: 0,
      default: 4,
      description: 'retries after a 429, a 5xx, a connection error or a timeout (4xx other than 429 are never retried)',
    },
    backoffSeconds: {
      type: 'number',
      minimum: 0,
      default: 0.5,
      description:
        'first retry delay; doubles each retry, times a seeded jitter in [0.5, 1); a Retry-After header overrides it',
    },
    maxBackoffSeconds: {
      type: 'number',
      minimum: 0,
      default: 30,
      description: "cap of the exponential retry delay (not of a server's Retry-After)",
    },
    concurrency: {
      type: 'integer',
      minimum: 1,
      default: 8,
      description: 'most requests in flight at once (retries included)',
    },
    logprobs: {
      type: 'boolean',
      default: true,
      description:
        "ask for the sampled tokens' log-probabilities; off: completions carry text only (empty token arrays)",
    },
    vllmTokenIds: {
      type: 'boolean',
      default: false,
      description:
        'vLLM only: send return_tokens_as_token_ids so logprob tokens read "token_id:N" and token ids are known',
    },
    splitN: {
      type: 'boolean',
      default: false,
      description:
        'send n requests with n = 1 (seed + k) instead of one request with n (for servers without `n`, e.g. llama.cpp)',
    },
    sendSeed: {
      type: 'boolean',
      default: true,
      description: 'send a per-request `seed` derived from the sampling seed (vLLM and llama.cpp honour it)',
    },
    extraBody: {
      type: 'object',
      default: {},
      description:
        'extra request fields merged into every body, e.g. {"top_k": 20}; cannot override the fields corl sets',
    },
  },
  additionalProperties: false,
} as const satisfies JSONSchema;

/** The options, as validated and defaulted by the schema (derived from it, so the two cannot drift). */
export type OpenAIOptions = FromSchema<typeof OPENAI_OPTIONS_SCHEMA>;
