import { definePlugin } from '../../core/registry/define';
import { ONNX_LM_OPTIONS_SCHEMA, type OnnxLmOptions } from './onnx-lm/options';
import { OnnxLmPolicy } from './onnx-lm/policy';

/**
 * A causal language model exported to ONNX by Hugging Face optimum (`--task
 * text-generation-with-past`), run by onnxruntime-node with its KV cache and tokenized by
 * @huggingface/tokenizers from the model folder. It cannot train; evaluation-only configs
 * (`trainer.steps: 0`) and `corl rephrase` use it.
 */
export const onnxLmPolicy = definePlugin({
  manifest: {
    name: 'corl:onnx-lm',
    kind: 'policy',
    description:
      'Hugging Face/optimum ONNX export of a causal LM (KV cache, tokenizer.json) on onnxruntime-node; samples only',
    corl: '^0.1.0',
    options: ONNX_LM_OPTIONS_SCHEMA,
  },
  create(options: OnnxLmOptions, ctx) {
    return OnnxLmPolicy.open(options, ctx.baseDir);
  },
});
