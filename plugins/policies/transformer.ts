import { resolveConfigPath } from '../../core/util/paths';
import { definePlugin } from '../../core/registry/define';
import { TRANSFORMER_OPTIONS_SCHEMA, type TransformerOptions } from './transformer/options';
import { TransformerPolicy } from './transformer/policy';

/**
 * The embedded trainable policy: a small decoder-only transformer (character tokenizer, pre-norm,
 * GELU or ReLU MLP) trained with GRPO or SFT cross-entropy, entirely in onnxruntime graphs
 * that corl generates and differentiates itself. Checkpoints are standard ONNX models.
 */
export const transformerPolicy = definePlugin({
  manifest: {
    name: 'corl:transformer',
    kind: 'policy',
    description: 'Embedded decoder-only transformer trained in onnxruntime (GRPO, pretraining), ONNX checkpoints',
    corl: '^0.1.0',
    options: TRANSFORMER_OPTIONS_SCHEMA,
    // A sampling call's KV cache: keys and values of every layer, [rows, dModel, length] floats,
    // its length at least the new tokens (at most the context).
    memory: (o: TransformerOptions, load) =>
      load.rows * o.layers * 2 * o.dModel * Math.min(o.context, Math.max(load.maxTokens, 1)) * 4,
  },
  async create(options: TransformerOptions, ctx) {
    const policy = new TransformerPolicy(options, options.init.seed ?? ctx.seed);
    if (options.checkpoint) {
      try {
        await policy.load(resolveConfigPath(options.checkpoint, ctx.baseDir), {
          optimizer: options.checkpointOptimizer,
        });
      } catch (e) {
        await policy.close();
        throw e;
      }
    }
    return policy;
  },
});
