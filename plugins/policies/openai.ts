import { definePlugin } from '../../core/registry/define';
import { OPENAI_OPTIONS_SCHEMA, type OpenAIOptions } from './openai/options';
import { OpenAIPolicy } from './openai/policy';

/**
 * Sampling and evaluation through an OpenAI-compatible server (vLLM, SGLang, llama.cpp):
 * /v1/completions or /v1/chat/completions (with images), retries with backoff, bounded concurrency.
 * It cannot train; evaluation-only configs (`trainer.steps: 0`) and `corl rephrase` use it.
 */
export const openaiPolicy = definePlugin({
  manifest: {
    name: 'corl:openai',
    kind: 'policy',
    description:
      'OpenAI-compatible server (vLLM, SGLang, llama.cpp): chat or completions, images, logprobs, retries; samples only',
    corl: '^0.1.0',
    options: OPENAI_OPTIONS_SCHEMA,
  },
  create(options: OpenAIOptions, ctx) {
    return new OpenAIPolicy(options, ctx.seed, ctx.baseDir);
  },
});
